// The double-precision oracles: the exact one reproduces the vectors' expected_exact (itself
// double precision rounded to f32); the same-quantisation one sits between arm and exact.
#include <gtest/gtest.h>

#include "moe_check.hpp"
#include "reference/oracle.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

// expected_exact is double rounded to f32: only rounding (~6e-8 relative) separates them.
constexpr double kExactVsVectorsRelRms = 1e-6;
constexpr double kExactVsVectorsWorstRow = 1e-6;

TEST(ExactOracle, ReproducesTheVectorsExpectedExact) {
  for (int layer = 0; layer < 2; ++layer) {
    const test::MoeVectors v = test::load_moe_vectors(layer);
    const OracleOutput exact = exact_oracle(v.layer.weights, v.inputs(), 2);
    std::vector<float> y(exact.y.begin(), exact.y.end());
    const auto s =
        test::compare_rows(y.data(), v.expected_exact.f32(), v.n_tokens, v.layer.weights.d);
    EXPECT_LE(s.rel_rms, kExactVsVectorsRelRms) << "layer " << layer;
    EXPECT_LE(s.worst_row, kExactVsVectorsWorstRow)
        << "layer " << layer << " row " << s.worst_row_index;
  }
}

TEST(SameQuantOracle, DiffersFromExactByQuantisationOnly) {
  // The int8 activations move the result by about 1e-2 of its RMS (the manifest's ggml figures
  // are ~3.6e-2): a same-quant oracle equal to exact, or far from it, is a broken oracle.
  const test::MoeVectors v = test::load_moe_vectors(0);
  const OracleOutput exact = exact_oracle(v.layer.weights, v.inputs(), 2);
  const OracleOutput same = same_quant_oracle(v.layer.weights, v.inputs(), 2);
  std::vector<float> y(same.y.begin(), same.y.end());
  const auto s = test::compare_rows(y.data(), exact.y.data(), v.n_tokens, v.layer.weights.d);
  EXPECT_GT(s.rel_rms, 1e-3);
  EXPECT_LT(s.rel_rms, v.ggml_rel_rms);
  // Pairs in (t, j) order: gate of pair (t, j) against the weights of expert ids[t, j].
  EXPECT_EQ(same.gate.size(), static_cast<size_t>(v.n_tokens * v.k * v.layer.weights.f));
}

TEST(SameQuantOracle, FedTheSameHItsOwnHGivesTheSameY) {
  const uint64_t seed = test::fresh_seed("oracle_h");
  synth::LayerSpec spec;
  spec.d = 256;
  spec.f = 128;
  spec.n_expert = 8;
  spec.seed = seed;
  const synth::SyntheticLayer layer = synth::make_layer(spec);
  const synth::Routing r = synth::uniform_routing(9, spec.n_expert, 2, seed + 1);
  const std::vector<float> x = synth::random_activations(9, spec.d, seed + 2);
  const LayerInputs in{x.data(), r.ids.data(), r.weights.data(), 9, 2};
  const OracleOutput own = same_quant_oracle(layer.weights, in, 1);
  std::vector<float> h_f32(own.h.begin(), own.h.end());
  const OracleOutput fed = same_quant_oracle(layer.weights, in, 1, h_f32.data());
  int64_t diffs = 0;
  for (size_t i = 0; i < own.y.size(); ++i) diffs += own.y[i] != fed.y[i];
  EXPECT_EQ(diffs, 0) << "seed " << seed;
}

}  // namespace
}  // namespace strata
