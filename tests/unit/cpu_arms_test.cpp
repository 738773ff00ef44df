// The CPU arms on the bundled qwen3moe vectors: accuracy against both oracles and ggml's own
// figures, bitwise agreement between arms and thread counts, and the zero-token rule.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "cpu/moe_cpu.hpp"
#include "moe_check.hpp"
#include "bounds.hpp"
#include "reference/oracle.hpp"

namespace strata {
namespace {

using test::Stage;

class CpuArmsOnVectors : public ::testing::TestWithParam<int> {};

TEST_P(CpuArmsOnVectors, BothArmsMatchOraclesAndEachOther) {
  const test::MoeVectors v = test::load_moe_vectors(GetParam());
  const MoeLayerWeights& layer = v.layer.weights;
  const LayerInputs in = v.inputs();
  const int64_t n_y = v.n_tokens * layer.d;
  const OracleOutput same = same_quant_oracle(layer, in, 2);

  std::vector<float> y_arm[2];
  CpuDebugOutputs debug[2];
  const Arm arms[2] = {Arm::kProduction, Arm::kFused};
  for (int a = 0; a < 2; ++a) {
    SCOPED_TRACE(a == 0 ? "production" : "fused");
    y_arm[a] = test::poisoned(n_y);
    run_layer_cpu(layer, in, arms[a], 2, y_arm[a].data(), &debug[a]);

    const auto vs_exact =
        test::compare_rows(y_arm[a].data(), v.expected_exact.f32(), v.n_tokens, layer.d);
    EXPECT_LE(vs_exact.rel_rms, v.ggml_rel_rms);
    EXPECT_LE(vs_exact.worst_row, v.ggml_worst_row) << "row " << vs_exact.worst_row_index;

    const auto vs_same = test::compare_rows(y_arm[a].data(), same.y.data(), v.n_tokens, layer.d);
    std::printf(
        "layer %d %s: vs exact rel-RMS %.3e worst %.3e (ggml %.3e / %.3e); vs same-quant %.3e / "
        "%.3e\n",
        GetParam(), a == 0 ? "production" : "fused", vs_exact.rel_rms, vs_exact.worst_row,
        v.ggml_rel_rms, v.ggml_worst_row, vs_same.rel_rms, vs_same.worst_row);
    test::expect_same_quant(vs_same, Numerics::kQ8, layer.down.type, Stage::kY);

    const int64_t n_pairs = v.n_tokens * v.k;
    const auto gate = test::compare_rows(debug[a].gate.data(), same.gate.data(), n_pairs, layer.f);
    const auto up = test::compare_rows(debug[a].up.data(), same.up.data(), n_pairs, layer.f);
    test::expect_same_quant(gate, Numerics::kQ8, layer.gate.type, Stage::kGate);
    test::expect_same_quant(up, Numerics::kQ8, layer.up.type, Stage::kUp);
  }
  EXPECT_EQ(test::count_bitwise_diffs(y_arm[0].data(), y_arm[1].data(), n_y), 0);
  EXPECT_EQ(
      test::count_bitwise_diffs(debug[0].gate.data(), debug[1].gate.data(), debug[0].gate.size()),
      0);
  EXPECT_EQ(test::count_bitwise_diffs(debug[0].up.data(), debug[1].up.data(), debug[0].up.size()),
            0);
  EXPECT_EQ(test::count_bitwise_diffs(debug[0].h.data(), debug[1].h.data(), debug[0].h.size()), 0);
  ASSERT_EQ(debug[0].down.size(), debug[1].down.size());
  EXPECT_EQ(
      test::count_bitwise_diffs(debug[0].down.data(), debug[1].down.data(), debug[0].down.size()),
      0);
}

TEST_P(CpuArmsOnVectors, BitwiseIdenticalForAnyThreadCount) {
  const test::MoeVectors v = test::load_moe_vectors(GetParam());
  const LayerInputs in = v.inputs();
  const int64_t n_y = v.n_tokens * v.layer.weights.d;
  for (Arm arm : {Arm::kProduction, Arm::kFused}) {
    std::vector<float> y1 = test::poisoned(n_y);
    run_layer_cpu(v.layer.weights, in, arm, 1, y1.data());
    for (int threads : {2, 4}) {
      std::vector<float> yn = test::poisoned(n_y);
      run_layer_cpu(v.layer.weights, in, arm, threads, yn.data());
      EXPECT_EQ(test::count_bitwise_diffs(y1.data(), yn.data(), n_y), 0)
          << "arm " << static_cast<int>(arm) << ", " << threads << " threads";
    }
  }
}

TEST_P(CpuArmsOnVectors, AllZeroTokenGivesExactlyZeroRow) {
  const test::MoeVectors v = test::load_moe_vectors(GetParam());
  const int64_t d = v.layer.weights.d;
  std::vector<float> x(v.x.f32(), v.x.f32() + v.n_tokens * d);
  const int64_t zero_token = v.n_tokens / 2;
  std::fill(x.begin() + zero_token * d, x.begin() + (zero_token + 1) * d, 0.0f);
  LayerInputs in = v.inputs();
  in.x = x.data();
  for (Arm arm : {Arm::kProduction, Arm::kFused}) {
    std::vector<float> y = test::poisoned(v.n_tokens * d);
    run_layer_cpu(v.layer.weights, in, arm, 2, y.data());
    int64_t nonzero = 0;
    for (int64_t c = 0; c < d; ++c) nonzero += !(y[zero_token * d + c] == 0.0f);
    EXPECT_EQ(nonzero, 0) << "arm " << static_cast<int>(arm);
    // The neighbours still carry signal (the zero row is not a global failure).
    double energy = 0.0;
    for (int64_t c = 0; c < d; ++c) energy += std::abs(y[(zero_token + 1) * d + c]);
    EXPECT_GT(energy, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Layers, CpuArmsOnVectors, ::testing::Values(0, 1));

}  // namespace
}  // namespace strata
