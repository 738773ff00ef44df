// The q10 profile on the CPU: the activation rule, the exact span dots at the extremes of every
// format's bound, the vector fold against the scalar definition, and both arms on the bundled
// qwen3moe layers against the q10 same-quantisation oracle and the exact oracle (where q10 must
// beat q8 by the declared factor), bitwise across arms, thread counts and chunk splits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/moe_cpu.hpp"
#include "cpu/tile_ops.hpp"
#include "formats/registry.hpp"
#include "bounds.hpp"
#include "moe_check.hpp"
#include "pipeline/arith_q10.hpp"
#include "pipeline/quantize.hpp"
#include "reference/oracle.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

// Declared before the profile existed (DESIGN.md, Q10.md); never moved.
using test::kQ10OverQ8ExactRatio;  // q10's rel-RMS vs exact, at most this times q8's
using test::Stage;

// ---- the activation rule -------------------------------------------------------------------
TEST(Q10Quantise, RuleOnCraftedBlocks) {
  float x[64];
  for (int i = 0; i < 64; ++i) x[i] = static_cast<float>(i - 20) * 0.37f;
  x[5] = -30.0f;  // amax, negative
  int16_t q[64];
  float scale = NAN;
  int32_t sums[4];
  quantize_block_q10(x, 64, q, &scale, sums);
  EXPECT_EQ(scale, 30.0f / 511.0f);
  EXPECT_EQ(q[5], -511);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(q[i], static_cast<int16_t>(std::roundf(x[i] / scale)));
  for (int s = 0; s < 4; ++s) {
    int32_t sum = 0;
    for (int i = 0; i < 16; ++i) sum += q[16 * s + i];
    EXPECT_EQ(sums[s], sum);
  }
  // Ties go away from zero: 1.5 steps -> 2, -2.5 steps -> -3.
  float ties[32] = {};
  ties[0] = 511.0f;
  ties[1] = 1.5f;
  ties[2] = -2.5f;
  quantize_block_q10(ties, 32, q, &scale, sums);
  EXPECT_EQ(scale, 1.0f);
  EXPECT_EQ(q[1], 2);
  EXPECT_EQ(q[2], -3);
  // An all-zero block: d = 0, q = 0, sums 0 (never NaN).
  float zeros[64] = {};
  std::fill(q, q + 64, int16_t{77});
  quantize_block_q10(zeros, 64, q, &scale, sums);
  EXPECT_EQ(scale, 0.0f);
  EXPECT_TRUE(std::all_of(q, q + 64, [](int16_t v) { return v == 0; }));
  EXPECT_TRUE(std::all_of(sums, sums + 4, [](int32_t v) { return v == 0; }));
}

TEST(Q10Quantise, RowsEndInAShortBlock) {
  const uint64_t seed = test::fresh_seed("q10_rows");
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t rows = 5, cols = 160;  // 64 + 64 + 32
  const std::vector<float> x = synth::random_activations(rows, cols, seed);
  QuantizedRowsQ10 q;
  quantize_rows_q10(x.data(), rows, cols, q, 2);
  ASSERT_EQ(q.blocks_per_row, 3);
  for (int64_t r = 0; r < rows; ++r) {
    float amax = 0.0f;
    for (int64_t c = 128; c < 160; ++c) amax = std::max(amax, std::abs(x[r * cols + c]));
    EXPECT_EQ(q.scales[r * 3 + 2], amax / 511.0f) << "row " << r;
    for (int64_t c = 0; c < cols; ++c) EXPECT_LE(std::abs(int{q.codes[r * cols + c]}), 511);
  }
}

// ---- the codes from the scale's reciprocal (the device epilogues) --------------------------
// q10_quotient(x, d, 1.0f / d) against x / d, and q10_code of it against the rule's code, over
// scales across the range (significands that stress a reciprocal: all ones, one, one ulp above
// one; the range's ends; seeded random ones) and values at every code's rounding boundary
// (k + 1/2 steps and the floats beside them), random values of every magnitude up to 511 steps,
// values too small for an exact remainder, and NaN. The quotient must be the division's bits
// wherever |x| >= 2^-102, the code the rule's everywhere.
TEST(Q10Quantise, ReciprocalQuotientEqualsTheDivision) {
  const uint64_t seed = test::fresh_seed("q10_reciprocal");
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto rule_code = [](float x, float d) {
    float r = (d == 0.0f) ? 0.0f : std::roundf(x / d);
    r = std::fmin(std::fmax(r, -511.0f), 511.0f);
    return static_cast<int>(r);
  };
  auto bits_float = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  };
  EXPECT_FALSE(q10_reciprocal_applies(0.0f));
  EXPECT_FALSE(q10_reciprocal_applies(NAN));
  EXPECT_FALSE(q10_reciprocal_applies(INFINITY));
  EXPECT_FALSE(q10_reciprocal_applies(std::nextafter(0x1p-100f, 0.0f)));
  EXPECT_FALSE(q10_reciprocal_applies(std::nextafter(0x1p100f, INFINITY)));
  EXPECT_FALSE(q10_reciprocal_applies(bits_float(0x00000001u)));  // subnormal
  EXPECT_TRUE(q10_reciprocal_applies(0x1p-100f));
  EXPECT_TRUE(q10_reciprocal_applies(0x1p100f));

  std::vector<float> scales;
  const uint32_t hard[] = {0x000000u, 0x7FFFFFu, 0x7FFFFEu, 0x000001u, 0x400000u, 0x3FFFFFu, 0x555555u, 0x2AAAAAu};
  for (const uint32_t m : hard)
    for (const int e : {-100, -60, -20, -7, 0, 13, 60, 99}) scales.push_back(std::ldexp(bits_float(0x3F800000u | m), e));
  scales.push_back(0x1p100f);
  scales.push_back(std::nextafter(0x1p100f, 0.0f));
  for (int i = 0; i < 200; ++i) {
    const auto exponent = static_cast<uint32_t>(127 - 100 + static_cast<int>(rng() % 200));
    scales.push_back(bits_float(exponent << 23 | static_cast<uint32_t>(rng() & 0x7FFFFFu)));
  }

  int64_t checked = 0;
  for (const float d : scales) {
    ASSERT_TRUE(q10_reciprocal_applies(d)) << d;
    const float r = 1.0f / d;
    auto check = [&](float x) {
      const float q = q10_quotient(x, d, r), reference = x / d;
      if (std::abs(x) >= 0x1p-102f)
        ASSERT_EQ(std::memcmp(&q, &reference, sizeof q), 0)
            << std::hexfloat << "x " << x << " d " << d << ": " << q << " against " << reference;
      ASSERT_EQ(q10_code(q), rule_code(x, d)) << std::hexfloat << "x " << x << " d " << d;
      ++checked;
    };
    for (int k = 0; k <= 512; ++k) {  // every rounding boundary, and the clamp's
      float x = (static_cast<float>(k) + 0.5f) * d;
      for (int step = 0; step < 4; ++step) x = std::nextafter(x, 0.0f);
      for (int step = 0; step < 9; ++step, x = std::nextafter(x, INFINITY)) {
        check(x);
        check(-x);
      }
    }
    for (int i = 0; i < 4096; ++i) {  // any magnitude up to 511.5 steps, both signs
      const float x = std::ldexp(std::uniform_real_distribution<float>(0.5f, 1.0f)(rng),
                                 static_cast<int>(rng() % 40) - 30) * 1022.0f * d;
      check((rng() & 1u) != 0 ? x : -x);
    }
    for (const float x : {0.0f, -0.0f, 0x1p-103f, -0x1p-110f, bits_float(0x00000001u), bits_float(0x807FFFFFu), NAN})
      check(x);
  }
  EXPECT_EQ(checked, static_cast<int64_t>(scales.size()) * (513 * 18 + 4096 + 7));  // none skipped
}

// ---- span dots at the bound ----------------------------------------------------------------
// Worst cases per format: codes +-511 against +-W_f, same sign everywhere (the largest span sum),
// alternating (cancellation), and big against tiny. With unit scales and one or two spans the
// fold returns the integer sum itself, which must equal the int64 reference exactly.
TEST(Q10SpanDots, ExactAtEveryFormatsBound) {
  for (const FormatInfo& f : block_formats()) {
    SCOPED_TRACE(std::string(f.name));
    ASSERT_TRUE(f.wide);
    const int span = f.wide_span;
    const int64_t cols = std::max(span, 32);
    for (int pattern = 0; pattern < 4; ++pattern) {
      cpu::WideRows w;
      w.rows = 1;
      w.cols = cols;
      w.span = span;
      w.w.resize(cols);
      w.scales.assign(cols / span, WideScale{1.0f, 0.0f});
      std::vector<int16_t> a(cols);
      int64_t expected = 0;
      for (int64_t i = 0; i < cols; ++i) {
        const int sign = pattern == 1 && i % 2 ? -1 : 1;
        w.w[i] = static_cast<int16_t>((pattern == 3 && i % 2 ? 1 : f.wide_max) * (pattern == 2 ? -1 : 1));
        a[i] = static_cast<int16_t>(sign * (pattern == 3 && i % 2 == 0 ? 1 : 511));
        expected += int64_t{w.w[i]} * a[i];
      }
      ASSERT_LT(std::llabs(expected), int64_t{1} << 24);
      const std::vector<float> a_scales(static_cast<size_t>(q10_blocks_per_row(cols)), 1.0f);
      const std::vector<int32_t> sums(static_cast<size_t>(cols / 16), 0);
      const cpu::WideActivationView view{a.data(), a_scales.data(), sums.data(), cols,
                                         q10_blocks_per_row(cols)};
      const int32_t row = 0;
      for (bool scalar : {false, true}) {
        const cpu::WideFormatOps ops = scalar ? cpu::wide_format_ops_scalar(f.type, "w")
                                              : cpu::wide_format_ops(f.type, "w");
        float out = NAN;
        ops.project(w, view, &row, 1, &out, 1);
        EXPECT_EQ(static_cast<int64_t>(out), expected)
            << "pattern " << pattern << (scalar ? " scalar" : " vector");
      }
    }
  }
}

// The tile decoder (with its AVX2 paths) gives exactly the traits' decode_wide, every format.
TEST(Q10SpanDots, TileDecodeEqualsDecodeWide) {
  const uint64_t seed = test::fresh_seed("q10_tile_decode");
  for (const FormatInfo& f : block_formats()) {
    if (!synth::synth_supports(f.type)) continue;
    SCOPED_TRACE(std::string(f.name) + " seed " + std::to_string(seed));
    const int64_t in = 512, rows = 6, experts = 2;
    const auto bytes = synth::random_expert_tensor(f.type, in, rows, experts, 0.1, seed);
    const ExpertTensor t = make_expert_tensor("t", f.type, bytes.data(), in, rows, experts);
    cpu::WideRows tile;
    cpu::wide_format_ops(f.type, "t").decode_rows(t, 1, 2, 3, tile);  // expert 1, rows 2..4
    ASSERT_EQ(tile.span, f.wide_span);
    int64_t w_diffs = 0, scale_diffs = 0;
    std::vector<int16_t> w(static_cast<size_t>(f.wide_span));
    for (int r = 0; r < 3; ++r)
      for (int64_t s = 0; s < in / f.wide_span; ++s) {
        const int64_t block = s * f.wide_span / f.block_values;
        const int span = static_cast<int>(s % (f.block_values / f.wide_span));
        WideScale sc;
        f.decode_wide(t.row(1, 2 + r) + block * f.block_bytes, span, w.data(), sc);
        w_diffs += std::memcmp(w.data(), tile.w.data() + r * in + s * f.wide_span,
                               sizeof(int16_t) * f.wide_span) != 0;
        scale_diffs += std::memcmp(&sc, &tile.scales[r * (in / f.wide_span) + s], sizeof sc) != 0;
      }
    EXPECT_EQ(w_diffs, 0);
    EXPECT_EQ(scale_diffs, 0);
  }
}

// The vector fold (eight activation rows per lane set) against the scalar definition, bitwise,
// on random tiles of every format: offsets, short spans and spare lanes included.
TEST(Q10SpanDots, VectorFoldEqualsScalarDefinition) {
  const uint64_t seed = test::fresh_seed("q10_lanes");
  for (const FormatInfo& f : block_formats()) {
    if (!synth::synth_supports(f.type)) continue;
    SCOPED_TRACE(std::string(f.name) + " seed " + std::to_string(seed));
    const int64_t in = 512, rows = 5, experts = 1, n_act = 11;
    const auto bytes = synth::random_expert_tensor(f.type, in, rows, experts, 0.1, seed);
    const ExpertTensor t = make_expert_tensor("t", f.type, bytes.data(), in, rows, experts);
    const std::vector<float> x = synth::random_activations(n_act, in, seed + 1);
    QuantizedRowsQ10 q;
    quantize_rows_q10(x.data(), n_act, in, q, 1);
    const cpu::WideActivationView view{q.codes.data(), q.scales.data(), q.sums.data(), in,
                                       q.blocks_per_row};
    std::vector<int32_t> act_rows(n_act);
    for (int i = 0; i < n_act; ++i) act_rows[i] = (i * 7) % n_act;
    cpu::WideRows tile;
    const cpu::WideFormatOps vec = cpu::wide_format_ops(f.type, "t");
    const cpu::WideFormatOps ref = cpu::wide_format_ops_scalar(f.type, "t");
    vec.decode_rows(t, 0, 0, rows, tile);
    std::vector<float> a = test::poisoned(n_act * rows), b = test::poisoned(n_act * rows);
    vec.project(tile, view, act_rows.data(), n_act, a.data(), rows);
    ref.project(tile, view, act_rows.data(), n_act, b.data(), rows);
    EXPECT_EQ(test::count_bitwise_diffs(a.data(), b.data(), n_act * rows), 0);
  }
}

// ---- the bundled layers ----------------------------------------------------------------------
class Q10OnVectors : public ::testing::TestWithParam<int> {};

TEST_P(Q10OnVectors, ArmsMatchOraclesAndBeatQ8AgainstExact) {
  const test::MoeVectors v = test::load_moe_vectors(GetParam());
  const MoeLayerWeights& layer = v.layer.weights;
  const LayerInputs in = v.inputs();
  const int64_t n_y = v.n_tokens * layer.d, n_pairs = v.n_tokens * v.k;

  std::vector<float> y[2] = {test::poisoned(n_y), test::poisoned(n_y)};
  CpuDebugOutputs debug[2];
  run_layer_cpu(layer, in, Arm::kProduction, 2, y[0].data(), &debug[0], Numerics::kQ10);
  run_layer_cpu(layer, in, Arm::kFused, 2, y[1].data(), &debug[1], Numerics::kQ10);
  EXPECT_EQ(test::count_bitwise_diffs(y[0].data(), y[1].data(), n_y), 0);
  for (std::vector<float> CpuDebugOutputs::*part :
       {&CpuDebugOutputs::gate, &CpuDebugOutputs::up, &CpuDebugOutputs::h, &CpuDebugOutputs::down})
    EXPECT_EQ(test::count_bitwise_diffs((debug[0].*part).data(), (debug[1].*part).data(),
                                        static_cast<int64_t>((debug[0].*part).size())),
              0);

  // Same quantisation: gate/up/h against the oracle's own; y against the oracle fed the arm's h.
  const OracleOutput own = same_quant_oracle(layer, in, 2, nullptr, Numerics::kQ10);
  const OracleOutput fed = same_quant_oracle(layer, in, 2, debug[0].h.data(), Numerics::kQ10);
  const auto bound = [](Stage stage, GgmlType format, const test::ErrorStats& s) {
    test::expect_same_quant(s, Numerics::kQ10, format, stage, test::stage_name(stage));
  };
  bound(Stage::kGate, layer.gate.type, test::compare_rows(debug[0].gate.data(), own.gate.data(), n_pairs, layer.f));
  bound(Stage::kUp, layer.up.type, test::compare_rows(debug[0].up.data(), own.up.data(), n_pairs, layer.f));
  bound(Stage::kH, layer.up.type, test::compare_rows(debug[0].h.data(), own.h.data(), n_pairs, layer.f));
  bound(Stage::kY, layer.down.type, test::compare_rows(y[0].data(), fed.y.data(), v.n_tokens, layer.d));

  // Exact: q10 at most 0.4x q8 and within 7e-3 on the bundled layers.
  std::vector<float> y_q8 = test::poisoned(n_y);
  run_layer_cpu(layer, in, Arm::kProduction, 2, y_q8.data(), nullptr, Numerics::kQ8);
  const auto q10 = test::compare_rows(y[0].data(), v.expected_exact.f32(), v.n_tokens, layer.d);
  const auto q8 = test::compare_rows(y_q8.data(), v.expected_exact.f32(), v.n_tokens, layer.d);
  std::printf("layer %d vs exact: q10 rel-RMS %.3e worst %.3e, q8 %.3e worst %.3e, ratio %.3f\n",
              GetParam(), q10.rel_rms, q10.worst_row, q8.rel_rms, q8.worst_row,
              q10.rel_rms / q8.rel_rms);
  RecordProperty("q10_rel_rms_exact", std::to_string(q10.rel_rms));
  RecordProperty("q8_rel_rms_exact", std::to_string(q8.rel_rms));
  EXPECT_LE(q10.rel_rms, test::bounds_for(Numerics::kQ10, layer.down.type, Stage::kY).exact_rel_rms);
  EXPECT_LE(q10.rel_rms, kQ10OverQ8ExactRatio * q8.rel_rms);
}

TEST_P(Q10OnVectors, BitwiseForAnyThreadCountAndChunkSplit) {
  const test::MoeVectors v = test::load_moe_vectors(GetParam());
  const MoeLayerWeights& layer = v.layer.weights;
  const LayerInputs in = v.inputs();
  const int64_t d = layer.d, n_y = v.n_tokens * d;
  for (Arm arm : {Arm::kProduction, Arm::kFused}) {
    SCOPED_TRACE(arm == Arm::kFused ? "fused" : "production");
    std::vector<float> y1 = test::poisoned(n_y);
    run_layer_cpu(layer, in, arm, 1, y1.data(), nullptr, Numerics::kQ10);
    for (int threads : {2, 3, 4}) {
      std::vector<float> yn = test::poisoned(n_y);
      run_layer_cpu(layer, in, arm, threads, yn.data(), nullptr, Numerics::kQ10);
      EXPECT_EQ(test::count_bitwise_diffs(y1.data(), yn.data(), n_y), 0) << threads << " threads";
    }
    // Chunked prefill: the tokens in three uneven chunks give the bits of one big chunk.
    std::vector<float> chunked = test::poisoned(n_y);
    const int64_t cuts[] = {0, 1, v.n_tokens / 3 + 1, v.n_tokens};
    for (int c = 0; c < 3; ++c) {
      const int64_t t0 = cuts[c], n = cuts[c + 1] - cuts[c];
      if (n == 0) continue;
      const LayerInputs part{in.x + t0 * d, in.ids + t0 * in.k, in.weights + t0 * in.k, n, in.k};
      run_layer_cpu(layer, part, arm, 2, chunked.data() + t0 * d, nullptr, Numerics::kQ10);
    }
    EXPECT_EQ(test::count_bitwise_diffs(y1.data(), chunked.data(), n_y), 0) << "chunk split";
  }
}

TEST_P(Q10OnVectors, AllZeroTokenGivesExactlyZeroRow) {
  const test::MoeVectors v = test::load_moe_vectors(GetParam());
  const int64_t d = v.layer.weights.d;
  std::vector<float> x(v.x.f32(), v.x.f32() + v.n_tokens * d);
  const int64_t zero_token = v.n_tokens / 2;
  std::fill(x.begin() + zero_token * d, x.begin() + (zero_token + 1) * d, 0.0f);
  LayerInputs in = v.inputs();
  in.x = x.data();
  for (Arm arm : {Arm::kProduction, Arm::kFused}) {
    std::vector<float> y = test::poisoned(v.n_tokens * d);
    run_layer_cpu(v.layer.weights, in, arm, 2, y.data(), nullptr, Numerics::kQ10);
    int64_t nonzero = 0;
    for (int64_t c = 0; c < d; ++c) nonzero += !(y[zero_token * d + c] == 0.0f);
    EXPECT_EQ(nonzero, 0) << "arm " << static_cast<int>(arm);
    double energy = 0.0;
    for (int64_t c = 0; c < d; ++c) energy += std::abs(y[(zero_token + 1) * d + c]);
    EXPECT_GT(energy, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Layers, Q10OnVectors, ::testing::Values(0, 1));

// q8's bits did not move when q10 arrived: the FNV-1a 64 of y's bytes on the bundled layers (the
// vectors' routing), as the release before q10 wrote them (`strata-moe run`, both arms).
uint64_t fnv1a(const float* data, int64_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  for (int64_t i = 0; i < n * 4; ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}

TEST(Q8Unchanged, BundledLayersKeepTheirBits) {
  const uint64_t expected[2] = {0xd2f8a387776aac24ull, 0xb846b8db8601806full};
  for (int l = 0; l < 2; ++l) {
    const test::MoeVectors v = test::load_moe_vectors(l);
    const int64_t n_y = v.n_tokens * v.layer.weights.d;
    for (Arm arm : {Arm::kProduction, Arm::kFused}) {
      std::vector<float> y = test::poisoned(n_y);
      run_layer_cpu(v.layer.weights, v.inputs(), arm, 2, y.data(), nullptr, Numerics::kQ8);
      EXPECT_EQ(fnv1a(y.data(), n_y), expected[l]) << "layer " << l << " arm " << static_cast<int>(arm);
    }
  }
}

// The exact-oracle factor also holds on a seeded synthetic layer (activations with outlier
// channels, skewed routing), not only on the bundled ones.
TEST(Q10Synthetic, BeatsQ8AgainstExactOracle) {
  synth::LayerSpec spec;
  spec.d = 512;
  spec.f = 256;
  spec.n_expert = 16;
  spec.seed = test::fresh_seed("q10_exact");
  SCOPED_TRACE("seed " + std::to_string(spec.seed));
  const synth::SyntheticLayer layer = synth::make_layer(spec);
  const int64_t n_tokens = 48;
  const int k = 4;
  const synth::Routing r = synth::skewed_routing(n_tokens, spec.n_expert, k, spec.seed + 1);
  const std::vector<float> x = synth::random_activations(n_tokens, spec.d, spec.seed + 2);
  const LayerInputs in{x.data(), r.ids.data(), r.weights.data(), n_tokens, k};
  const OracleOutput exact = exact_oracle(layer.weights, in, 2);
  std::vector<float> y10 = test::poisoned(n_tokens * spec.d), y8 = test::poisoned(n_tokens * spec.d);
  run_layer_cpu(layer.weights, in, Arm::kFused, 2, y10.data(), nullptr, Numerics::kQ10);
  run_layer_cpu(layer.weights, in, Arm::kFused, 2, y8.data(), nullptr, Numerics::kQ8);
  const auto e10 = test::compare_rows(y10.data(), exact.y.data(), n_tokens, spec.d);
  const auto e8 = test::compare_rows(y8.data(), exact.y.data(), n_tokens, spec.d);
  std::printf("synthetic vs exact: q10 %.3e q8 %.3e ratio %.3f\n", e10.rel_rms, e8.rel_rms,
              e10.rel_rms / e8.rel_rms);
  EXPECT_LE(e10.rel_rms, kQ10OverQ8ExactRatio * e8.rel_rms);
}

}  // namespace
}  // namespace strata
