// The CPU arms on synthetic layers with fresh seeds, in both numerics profiles: edge geometries
// and every format pair of the profile.
#include <gtest/gtest.h>

#include <string>

#include "cpu/moe_cpu.hpp"
#include "formats/registry.hpp"
#include "moe_check.hpp"
#include "bounds.hpp"
#include "reference/oracle.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

using test::Stage;

struct Case {
  synth::LayerSpec spec;
  int64_t n_tokens;
  int k;
  enum class Routing { kSkewed, kUniform, kSingle } routing = Routing::kSkewed;
};

// Runs both arms (2 threads) and checks: bitwise equal to each other, gate/up/h against the
// same-quantisation oracle, y against the oracle fed the arm's h (docs/numerics.md).
void check_case(const Case& c, const std::string& label, Numerics numerics) {
  const uint64_t seed = c.spec.seed;
  SCOPED_TRACE(label + " seed " + std::to_string(seed) + " " + numerics_name(numerics));
  const synth::SyntheticLayer layer = synth::make_layer(c.spec);
  const synth::Routing routing =
      c.routing == Case::Routing::kSkewed
          ? synth::skewed_routing(c.n_tokens, c.spec.n_expert, c.k, seed + 1)
      : c.routing == Case::Routing::kUniform
          ? synth::uniform_routing(c.n_tokens, c.spec.n_expert, c.k, seed + 1)
          : synth::single_expert_routing(c.n_tokens, c.spec.n_expert, c.k, seed + 1);
  const std::vector<float> x = synth::random_activations(c.n_tokens, c.spec.d, seed + 2);
  LayerInputs in{x.data(), routing.ids.data(), routing.weights.data(), c.n_tokens, c.k};
  const int64_t n_y = c.n_tokens * c.spec.d, n_pairs = c.n_tokens * c.k;

  std::vector<float> y[2] = {test::poisoned(n_y), test::poisoned(n_y)};
  CpuDebugOutputs debug[2];
  run_layer_cpu(layer.weights, in, Arm::kProduction, 2, y[0].data(), &debug[0], numerics);
  run_layer_cpu(layer.weights, in, Arm::kFused, 2, y[1].data(), &debug[1], numerics);
  EXPECT_EQ(test::count_bitwise_diffs(y[0].data(), y[1].data(), n_y), 0);

  for (std::vector<float> CpuDebugOutputs::*part :
       {&CpuDebugOutputs::gate, &CpuDebugOutputs::up, &CpuDebugOutputs::h, &CpuDebugOutputs::down})
    EXPECT_EQ(test::count_bitwise_diffs((debug[0].*part).data(), (debug[1].*part).data(),
                                        static_cast<int64_t>((debug[0].*part).size())),
              0);
  const OracleOutput same = same_quant_oracle(layer.weights, in, 2, debug[0].h.data(), numerics);
  const auto check = [&](Stage stage, GgmlType format, const float* got, const double* ref,
                         int64_t rows, int64_t cols) {
    test::expect_same_quant(test::compare_rows(got, ref, rows, cols), numerics, format, stage,
                            test::stage_name(stage));
  };
  const MoeLayerWeights& w = layer.weights;
  check(Stage::kGate, w.gate.type, debug[0].gate.data(), same.gate.data(), n_pairs, c.spec.f);
  check(Stage::kUp, w.up.type, debug[0].up.data(), same.up.data(), n_pairs, c.spec.f);
  check(Stage::kH, w.up.type, debug[0].h.data(), same.h.data(), n_pairs, c.spec.f);
  check(Stage::kY, w.down.type, y[0].data(), same.y.data(), c.n_tokens, c.spec.d);
}

class CpuArmsSynthetic : public ::testing::TestWithParam<Numerics> {};

Case base_case(const char* salt) {
  Case c;
  c.spec.d = 256;
  c.spec.f = 128;
  c.spec.n_expert = 16;
  c.spec.seed = test::fresh_seed(salt);
  c.n_tokens = 40;
  c.k = 4;
  return c;
}

TEST_P(CpuArmsSynthetic, SkewedRoutingWithEmptyExperts) {
  Case c = base_case("skewed");
  c.n_tokens = 97;  // not a multiple of any tile
  check_case(c, "skewed", GetParam());
}

TEST_P(CpuArmsSynthetic, SingleToken) {
  Case c = base_case("t1");
  c.n_tokens = 1;
  check_case(c, "T=1", GetParam());
}

TEST_P(CpuArmsSynthetic, TopOne) {
  Case c = base_case("k1");
  c.k = 1;
  check_case(c, "k=1", GetParam());
}

TEST_P(CpuArmsSynthetic, OneExpertTakesEveryToken) {
  Case c = base_case("single");
  c.k = 1;
  c.routing = Case::Routing::kSingle;
  check_case(c, "one expert", GetParam());
}

TEST_P(CpuArmsSynthetic, SmallestLegalGeometry) {
  Case c = base_case("smallest");
  c.spec.d = 256;  // IQ3_S block
  c.spec.f = 64;   // Q2_0 block (the down rows' length)
  c.spec.n_expert = 2;
  c.n_tokens = 3;
  c.k = 2;
  c.routing = Case::Routing::kUniform;
  check_case(c, "smallest", GetParam());
}

TEST_P(CpuArmsSynthetic, ThirtyTwoWideLayerInQ8_0) {
  Case c = base_case("d32");
  c.spec.d = 32;  // one 32-value block per row: the smallest geometry the pipeline allows
  c.spec.f = 32;
  c.spec.gate_type = c.spec.up_type = c.spec.down_type = GgmlType::Q8_0;
  c.n_tokens = 5;
  c.k = 2;
  check_case(c, "d=f=32 q8_0", GetParam());
}

TEST_P(CpuArmsSynthetic, ThousandExpertsTopSixteen) {
  Case c = base_case("e1024");
  c.spec.n_expert = 1024;
  c.spec.f = 64;
  c.n_tokens = 6;
  c.k = 16;
  c.routing = Case::Routing::kUniform;
  check_case(c, "E=1024 k=16", GetParam());
}

TEST_P(CpuArmsSynthetic, BitwiseIdenticalForAnyThreadCount) {
  Case c = base_case("threads");
  c.n_tokens = 70;
  const synth::SyntheticLayer layer = synth::make_layer(c.spec);
  const synth::Routing r = synth::skewed_routing(c.n_tokens, c.spec.n_expert, c.k, c.spec.seed + 1);
  const std::vector<float> x = synth::random_activations(c.n_tokens, c.spec.d, c.spec.seed + 2);
  const LayerInputs in{x.data(), r.ids.data(), r.weights.data(), c.n_tokens, c.k};
  const int64_t n_y = c.n_tokens * c.spec.d;
  for (Arm arm : {Arm::kProduction, Arm::kFused}) {
    std::vector<float> y1 = test::poisoned(n_y);
    run_layer_cpu(layer.weights, in, arm, 1, y1.data(), nullptr, GetParam());
    for (int threads : {2, 3, 4}) {
      std::vector<float> yn = test::poisoned(n_y);
      run_layer_cpu(layer.weights, in, arm, threads, yn.data(), nullptr, GetParam());
      EXPECT_EQ(test::count_bitwise_diffs(y1.data(), yn.data(), n_y), 0)
          << "seed " << c.spec.seed << " arm " << static_cast<int>(arm) << " threads " << threads;
    }
  }
}

// Every format of the registry the profile carries (int8 for q8, wide for q10), as gate/up and as
// down (read at run time: a format added to formats/all.hpp is covered without touching this).
TEST_P(CpuArmsSynthetic, EveryFormatPair) {
  std::vector<const FormatInfo*> formats;
  for (const FormatInfo& f : block_formats())
    if (GetParam() == Numerics::kQ10 ? f.wide : f.int8) formats.push_back(&f);
  EXPECT_EQ(formats.size(), block_formats().size()) << "every format is carried by both profiles";
  ASSERT_GE(formats.size(), 2u);
  for (const FormatInfo* f : formats) {
    EXPECT_TRUE(synth::synth_supports(f->type)) << f->name << " has no synthetic generator";
    if (!synth::synth_supports(f->type)) continue;
    for (const FormatInfo* g : formats) {
      if (!synth::synth_supports(g->type)) continue;
      Case c = base_case("pair");
      c.spec.gate_type = c.spec.up_type = f->type;
      c.spec.down_type = g->type;
      c.spec.f = 256;  // K-quant rows of the down tensor need 256 values
      c.spec.n_expert = 4;
      c.n_tokens = 8;
      c.k = 2;
      check_case(c, std::string(f->name) + " / " + std::string(g->name), GetParam());
    }
  }
}

TEST_P(CpuArmsSynthetic, GateAndUpInDifferentFormats) {
  Case c = base_case("mixed");
  c.spec.up_type = GgmlType::Q2_0;
  check_case(c, "iq3_s gate, q2_0 up", GetParam());
}

// q10 rows whose length is no multiple of 64 end in a 32-value activation block (and a 32-wide
// fused tile): d = f = 96 in Q8_0.
TEST_P(CpuArmsSynthetic, RowsEndingInAHalfBlock) {
  Case c = base_case("d96");
  c.spec.d = 96;
  c.spec.f = 160;
  c.spec.gate_type = c.spec.up_type = GgmlType::Q4_0;
  c.spec.down_type = GgmlType::Q8_0;
  c.n_tokens = 9;
  c.k = 3;
  check_case(c, "d=96 f=160", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Profiles, CpuArmsSynthetic,
                         ::testing::Values(Numerics::kQ8, Numerics::kQ10),
                         [](const ::testing::TestParamInfo<Numerics>& info) {
                           return std::string(numerics_name(info.param));
                         });

}  // namespace
}  // namespace strata
