// The fused-wmma CUDA arm (gate/up + SwiGLU + requant and down on mma_tile_16) on IQ3_S gate/up +
// Q2_0 down layers: the gate/up chain against the same-quantisation double oracle, every
// intermediate and y bitwise against the CPU production arm and y against the CUDA production
// arm, determinism over repeated launches, the Q2_0 decode on the device against ggml's vectors,
// and device variants of the trap tests (tests/unit/wmma_traps_test.cpp): the tile primitive's
// layout and the decode of all 128 rows of a tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "bounds.hpp"
#include "cpu/moe_cpu.hpp"
#include "cuda/backend/run_layer.hpp"
#include "cuda/decode/decode.hpp"
#include "wmma_probes.hpp"
#include "cuda/fused_wmma/wmma_arm.hpp"
#include "cuda/mma/mma_tile_16_layout.hpp"
#include "decode_vectors.hpp"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"
#include "formats/registry.hpp"
#include "gpu_test_util.hpp"
#include "layer_run.hpp"
#include "synthetic_case.hpp"
#include "moe_check.hpp"
#include "reference/oracle.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

// Bounds: tests/support/bounds.hpp (declared before the wmma kernels were ever measured).
using test::kMaxDifferingElements;  // vs the production arms, launch vs launch
using test::Stage;
constexpr int kDeterminismRounds = 3;

namespace wmma = cuda::fused_wmma;

// The sorted-pair rows of the wmma workspace in (token, slot) order.
std::vector<float> unsorted_rows(const float* device_rows, const cuda::DeviceGroupingTables& g, int64_t n_pairs,
                                 int k, int64_t cols) {
  return test::unsorted_rows(device_rows, g.pair_token, g.pair_slot, n_pairs, k, cols);
}

struct WmmaCase {
  const char* name;
  int64_t d, f, n_expert;
  int k;
  int64_t n_tokens;
  int routing;  // 0 skewed, 1 uniform, 2 single expert, 3 counts around the 32-pair tile
};

synth::Routing routing_for(const WmmaCase& c, uint64_t seed) {
  switch (c.routing) {
    case 0:
      return synth::skewed_routing(c.n_tokens, c.n_expert, c.k, seed);
    case 1:
      return synth::uniform_routing(c.n_tokens, c.n_expert, c.k, seed);
    case 2:
      return synth::single_expert_routing(c.n_tokens, c.n_expert, c.k, seed);
    default:
      return test::counted_routing(c.n_tokens, c.n_expert, c.k, {0, 1, 31, 32, 33, 65}, seed);
  }
}

// The fused-wmma arm's own entry point on a case's device inputs; waits and returns y.
std::vector<float> run_wmma(test::DeviceRun& run, const MoeLayerWeights& layer, wmma::WmmaLayerWorkspace& ws,
                            cudaStream_t stream = nullptr) {
  run.poison_y();
  wmma::run_layer_wmma(layer, run.x.get(), run.ids.get(), run.weights.get(), run.inputs.n_tokens, run.inputs.k, ws,
                       stream, run.y.get());
  STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
  return run.y_host();
}

using test::count_nan;

class WmmaLayer : public ::testing::TestWithParam<WmmaCase> {};

TEST_P(WmmaLayer, GateUpChainWithinOracleAndBitwiseEqualToProduction) {
  STRATA_REQUIRE_GPU();
  const WmmaCase c = GetParam();
  const uint64_t seed = test::fresh_seed(std::string("wmma_") + c.name);
  SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed));
  test::SyntheticCase sc =
      test::make_synthetic_case(c.d, c.f, c.n_expert, c.k, c.n_tokens, test::CaseRouting::kSkewed, seed);
  sc.routing = routing_for(c, seed + 1);  // this fixture also has counted routings around the tile
  const synth::SyntheticLayer& host = sc.layer;
  const test::DeviceLayerCopy dev = test::upload_layer(host.weights);
  ASSERT_TRUE(wmma::wmma_supports(dev.weights));
  const LayerInputs in = sc.inputs();
  const int64_t P = c.n_tokens * c.k;

  test::DeviceRun run(in, c.d);
  wmma::WmmaLayerWorkspace ws;
  ws.keep_intermediates = true;
  run_wmma(run, dev.weights, ws);  // sizes the workspace; then poison what the kernels must write
  test::poison_device(ws.gate.get(), static_cast<size_t>(P * c.f));
  test::poison_device(ws.up.get(), static_cast<size_t>(P * c.f));
  test::poison_device(ws.h.get(), static_cast<size_t>(P * c.f));
  test::poison_device(ws.down.get(), static_cast<size_t>(P * c.d));
  const std::vector<float> y = run_wmma(run, dev.weights, ws);
  const auto gate = unsorted_rows(ws.gate.get(), ws.tables, P, c.k, c.f);
  const auto up = unsorted_rows(ws.up.get(), ws.tables, P, c.k, c.f);
  const auto h = unsorted_rows(ws.h.get(), ws.tables, P, c.k, c.f);
  const auto down = unsorted_rows(ws.down.get(), ws.tables, P, c.k, c.d);

  // ---- CPU production arm, bitwise: every intermediate and y -------------------------------
  CpuDebugOutputs cpu;
  std::vector<float> y_cpu = test::poisoned(run.n_y);
  run_layer_cpu(host.weights, in, Arm::kProduction, 0, y_cpu.data(), &cpu);
  const int64_t diff_gate = test::count_bitwise_diffs(gate.data(), cpu.gate.data(), P * c.f);
  const int64_t diff_up = test::count_bitwise_diffs(up.data(), cpu.up.data(), P * c.f);
  const int64_t diff_h = test::count_bitwise_diffs(h.data(), cpu.h.data(), P * c.f);
  const int64_t diff_down = test::count_bitwise_diffs(down.data(), cpu.down.data(), P * c.d);
  const int64_t diff_y = test::count_bitwise_diffs(y.data(), y_cpu.data(), run.n_y);
  // ---- CUDA production arm, bitwise: y -------------------------------------------------------
  cuda::Workspace prod_ws;
  test::poison_device(run.y.get(), static_cast<size_t>(run.n_y));
  cuda::run_layer(
      dev.weights,
      cuda::DeviceInputs{run.x.get(), run.ids.get(), run.weights.get(), c.n_tokens, c.k},
      Arm::kProduction, prod_ws, nullptr, run.y.get());
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> y_prod = test::to_host(run.y.get(), static_cast<size_t>(run.n_y));
  const int64_t diff_prod = test::count_bitwise_diffs(y.data(), y_prod.data(), run.n_y);
  // ---- same-quantisation oracle ---------------------------------------------------------------
  const OracleOutput same = same_quant_oracle(host.weights, in, 0, h.data());
  const auto vs_gate = test::compare_rows(gate.data(), same.gate.data(), P, c.f);
  const auto vs_up = test::compare_rows(up.data(), same.up.data(), P, c.f);
  const auto vs_h = test::compare_rows(h.data(), same.h.data(), P, c.f);
  const auto vs_y = test::compare_rows(y.data(), same.y.data(), c.n_tokens, c.d);
  std::printf(
      "%s: wmma vs CPU production differing: gate %lld, up %lld, h %lld, down %lld, y %lld; vs "
      "CUDA "
      "production y %lld; same-quant gate %.3e / %.3e, up %.3e / %.3e, h %.3e / %.3e, y %.3e / "
      "%.3e\n",
      c.name, static_cast<long long>(diff_gate), static_cast<long long>(diff_up),
      static_cast<long long>(diff_h), static_cast<long long>(diff_down),
      static_cast<long long>(diff_y), static_cast<long long>(diff_prod), vs_gate.rel_rms,
      vs_gate.worst_row, vs_up.rel_rms, vs_up.worst_row, vs_h.rel_rms, vs_h.worst_row, vs_y.rel_rms,
      vs_y.worst_row);
  EXPECT_EQ(count_nan(y) + count_nan(gate) + count_nan(up) + count_nan(h) + count_nan(down), 0);
  EXPECT_LE(diff_gate, kMaxDifferingElements);
  EXPECT_LE(diff_up, kMaxDifferingElements);
  EXPECT_LE(diff_h, kMaxDifferingElements);
  EXPECT_LE(diff_down, kMaxDifferingElements);
  EXPECT_LE(diff_y, kMaxDifferingElements);
  EXPECT_LE(diff_prod, kMaxDifferingElements);
  const MoeLayerWeights& w = host.weights;
  test::expect_same_quant(vs_gate, Numerics::kQ8, w.gate.type, Stage::kGate);
  test::expect_same_quant(vs_up, Numerics::kQ8, w.up.type, Stage::kUp);
  test::expect_same_quant(vs_h, Numerics::kQ8, w.up.type, Stage::kH);
  test::expect_same_quant(vs_y, Numerics::kQ8, w.down.type, Stage::kY);
}

TEST_P(WmmaLayer, DoubleLaunchIsBitwiseIdenticalThreeTimes) {
  STRATA_REQUIRE_GPU();
  const WmmaCase c = GetParam();
  const uint64_t seed = test::fresh_seed(std::string("wmma_det_") + c.name);
  SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed));
  const test::SyntheticCase sc =
      test::make_synthetic_case(c.d, c.f, c.n_expert, c.k, c.n_tokens, test::CaseRouting::kSkewed, seed);
  const test::DeviceLayerCopy dev = test::upload_layer(sc.layer.weights);
  const LayerInputs in = sc.inputs();
  test::DeviceRun run(in, c.d);
  cudaStream_t stream = nullptr;
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int round = 0; round < kDeterminismRounds; ++round) {
    wmma::WmmaLayerWorkspace ws, other;
    const std::vector<float> first = run_wmma(run, dev.weights, ws);
    const std::vector<float> second = run_wmma(run, dev.weights, round == 1 ? other : ws, stream);
    const int64_t differing = test::count_bitwise_diffs(first.data(), second.data(), run.n_y);
    std::printf("%s: round %d, launch vs launch differing elements: %lld\n", c.name, round,
                static_cast<long long>(differing));
    EXPECT_EQ(differing, kMaxDifferingElements) << "round " << round;
    EXPECT_EQ(count_nan(first), 0);
  }
  STRATA_CUDA_CHECK(cudaStreamDestroy(stream));
}

INSTANTIATE_TEST_SUITE_P(
    Edges, WmmaLayer,
    // f is a multiple of 64 (Q2_0 down rows) and d of 256 (IQ3_S rows): items are never partial
    // along the columns for this format pair; the unit traps cover the partial-row path.
    ::testing::Values(WmmaCase{"t1", 256, 128, 8, 2, 1, 1},
                      WmmaCase{"t17_three_feature_blocks", 256, 192, 8, 3, 17, 0},
                      WmmaCase{"one_row_experts", 256, 192, 64, 1, 5, 1},
                      WmmaCase{"tile_boundary_counts", 512, 256, 12, 3, 100, 3},
                      WmmaCase{"single_expert_many_rows", 256, 192, 16, 2, 300, 2},
                      WmmaCase{"skewed_many_tiles", 768, 320, 8, 4, 200, 0},
                      WmmaCase{"qwen35_a3b_T17", 2048, 512, 256, 8, 17, 0}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- the Q2_0 down format decoded on the device, against ggml's vectors ------------------------
TEST(WmmaDownDecode, Q2_0BitExactOnDeviceThroughTheChainLoader) {
  STRATA_REQUIRE_GPU();
  const test::DecodeVectors v = test::load_decode_vectors("q2_0");
  const FormatInfo* info = find_block_format(v.name);
  ASSERT_NE(info, nullptr);
  cuda::DeviceBuffer<uint8_t> blocks(v.blocks.size() +
                                     2);  // 2 bytes past an aligned address, as in GGUF
  STRATA_CUDA_CHECK(
      cudaMemcpy(blocks.get() + 2, v.blocks.data(), v.blocks.size(), cudaMemcpyHostToDevice));
  // The library's device decode.
  cuda::DeviceBuffer<float> out(v.expected.size());
  test::poison_device(out.get(), v.expected.size());
  cuda::decode_blocks_cuda(info->type, blocks.get() + 2, v.n_blocks, out.get(), nullptr);
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got = test::to_host(out.get(), v.expected.size());
  std::string report;
  const int64_t mismatches = test::count_bit_mismatches(v, got.data(), report);
  // The chain kernels' loader: each block as one "row" of 64 values (two sub-blocks, one stage),
  // 128 rows per probe launch; scale * code must give ggml's bits.
  const int rows_per_tile = wmma::chain_tile_weight_rows();
  const int stage_subs = wmma::chain_tile_stage_subs();
  ASSERT_EQ(stage_subs * 32, Q2_0::kBlockValues);
  std::vector<float> recomposed(v.expected.size(), std::nanf(""));
  cuda::DeviceBuffer<int8_t> codes(static_cast<size_t>(2 * stage_subs * rows_per_tile * 16));
  cuda::DeviceBuffer<float> scales(static_cast<size_t>(rows_per_tile * stage_subs));
  for (int64_t first = 0; first < v.n_blocks; first += rows_per_tile) {
    const int n_rows = static_cast<int>(std::min<int64_t>(rows_per_tile, v.n_blocks - first));
    wmma::launch_decode_stage_probe<Q2_0>(blocks.get() + 2 + first * Q2_0::kBlockBytes,
                                          Q2_0::kBlockBytes, n_rows, stage_subs, 0, codes.get(),
                                          scales.get(), nullptr);
    STRATA_CUDA_CHECK(cudaDeviceSynchronize());
    const auto c =
        test::to_host(codes.get(), static_cast<size_t>(2 * stage_subs * rows_per_tile * 16));
    const auto s = test::to_host(scales.get(), static_cast<size_t>(rows_per_tile * stage_subs));
    for (int r = 0; r < n_rows; ++r)
      for (int i = 0; i < Q2_0::kBlockValues; ++i) {
        const int slice = i / 16;  // [k16 slice][row][16]
        const int8_t code = c[static_cast<size_t>((slice * rows_per_tile + r) * 16 + i % 16)];
        recomposed[static_cast<size_t>((first + r) * Q2_0::kBlockValues + i)] =
            s[static_cast<size_t>(r * stage_subs + i / 32)] * static_cast<float>(code);
      }
  }
  std::string report_chain;
  const int64_t mismatches_chain = test::count_bit_mismatches(v, recomposed.data(), report_chain);
  std::printf("q2_0: %lld blocks; device decode mismatches %lld, chain loader mismatches %lld\n",
              static_cast<long long>(v.n_blocks), static_cast<long long>(mismatches),
              static_cast<long long>(mismatches_chain));
  EXPECT_EQ(mismatches, 0) << report;
  EXPECT_EQ(mismatches_chain, 0) << report_chain;
}

// ---- device variants of the traps -------------------------------------------------------------
// (5) on the real tensor cores: the chained mma_tile_16 (two k slices) against the host product
// with the same index helpers; the faulty layouts give different tiles on the same input.
TEST(WmmaDeviceTraps, TilePrimitiveMatchesHostLayout) {
  STRATA_REQUIRE_GPU();
  const uint64_t seed = test::fresh_seed("wmma_device_tile");
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  std::vector<int8_t> a(2 * mma::kTile16Elems), b(2 * mma::kTile16Elems);
  for (auto& v : a) v = static_cast<int8_t>(static_cast<int>(rng.next() % 256) - 128);
  for (auto& v : b) v = static_cast<int8_t>(static_cast<int>(rng.next() % 256) - 128);
  a[0] = b[0] = -128;  // the extremes too
  a[1] = b[1] = 127;
  auto host_product = [&](auto fault) {
    std::vector<int32_t> c(mma::kTile16Elems, 0);
    for (int h = 0; h < 2; ++h)
      mma::tile_product_host<decltype(fault)::value>(
          a.data() + h * mma::kTile16Elems, 16, b.data() + h * mma::kTile16Elems, 16, c.data());
    return c;
  };
  const auto expected =
      host_product(std::integral_constant<mma::TileFault, mma::TileFault::kNone>{});
  const auto b_row_major =
      host_product(std::integral_constant<mma::TileFault, mma::TileFault::kBRowMajor>{});
  const auto c_col_major =
      host_product(std::integral_constant<mma::TileFault, mma::TileFault::kCColMajor>{});
  auto d_a = test::to_device(a);
  auto d_b = test::to_device(b);
  cuda::DeviceBuffer<int32_t> d_c(mma::kTile16Elems);
  STRATA_CUDA_CHECK(cudaMemset(d_c.get(), 0x7F, mma::kTile16Elems * sizeof(int32_t)));
  wmma::launch_mma_tile_16_probe(d_a.get(), d_b.get(), d_c.get(), nullptr);
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = test::to_host(d_c.get(), mma::kTile16Elems);
  int64_t wrong = 0, wrong_b = 0, wrong_c = 0;
  for (int i = 0; i < mma::kTile16Elems; ++i) {
    wrong += got[i] != expected[i];
    wrong_b += got[i] != b_row_major[i];
    wrong_c += got[i] != c_col_major[i];
  }
  std::printf(
      "mma_tile_16 on the device vs host layout: %lld of 256 differ (vs B-row-major model %lld, vs "
      "C-col-major model %lld)\n",
      static_cast<long long>(wrong), static_cast<long long>(wrong_b),
      static_cast<long long>(wrong_c));
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(wrong_b, 0);
  EXPECT_GT(wrong_c, 0);
}

// (1)-(3) on the device: one stage of a 128-row IQ3_S tile through the chain loader; every row,
// 64-127 included, equals decode_sub (codes and scale bits).
TEST(WmmaDeviceTraps, EveryRowOfAnIq3sTileDecodedOnDevice) {
  STRATA_REQUIRE_GPU();
  const uint64_t seed = test::fresh_seed("wmma_device_rows");
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int rows = wmma::chain_tile_weight_rows();
  const int stage_subs = wmma::chain_tile_stage_subs();
  constexpr int kD = 512, kSubs = kD / 32;
  const size_t row_bytes = kD / Iq3S::kBlockValues * Iq3S::kBlockBytes;
  const std::vector<uint8_t> tensor =
      synth::random_expert_tensor(GgmlType::IQ3_S, kD, rows, 1, 1.0, seed);
  cuda::DeviceBuffer<uint8_t> d_tensor(tensor.size() + 2);
  STRATA_CUDA_CHECK(
      cudaMemcpy(d_tensor.get() + 2, tensor.data(), tensor.size(), cudaMemcpyHostToDevice));
  cuda::DeviceBuffer<int8_t> codes(static_cast<size_t>(2 * stage_subs * rows * 16));
  cuda::DeviceBuffer<float> scales(static_cast<size_t>(rows * stage_subs));
  int64_t wrong_rows_low = 0, wrong_rows_high = 0;
  for (int stage = 0; stage < kSubs / stage_subs; ++stage) {
    STRATA_CUDA_CHECK(
        cudaMemset(codes.get(), 0x5A, static_cast<size_t>(2 * stage_subs * rows * 16)));
    test::poison_device(scales.get(), static_cast<size_t>(rows * stage_subs));
    wmma::launch_decode_stage_probe<Iq3S>(d_tensor.get() + 2, row_bytes, rows, kSubs, stage,
                                          codes.get(), scales.get(), nullptr);
    STRATA_CUDA_CHECK(cudaDeviceSynchronize());
    const auto c = test::to_host(codes.get(), static_cast<size_t>(2 * stage_subs * rows * 16));
    const auto s = test::to_host(scales.get(), static_cast<size_t>(rows * stage_subs));
    for (int r = 0; r < rows; ++r) {
      bool ok = true;
      for (int j = 0; j < stage_subs; ++j) {
        const int sub = stage * stage_subs + j;
        int8_t q[32];
        SubScale w;
        Iq3S::decode_sub(tensor.data() + r * row_bytes + (sub / 8) * Iq3S::kBlockBytes, sub % 8, q,
                         w);
        for (int i = 0; i < 32; ++i)
          ok &= c[static_cast<size_t>(((2 * j + i / 16) * rows + r) * 16 + i % 16)] == q[i];
        ok &=
            test::bits_of(s[static_cast<size_t>(r * stage_subs + j)]) == test::bits_of(w.scale[0]);
      }
      (r < 64 ? wrong_rows_low : wrong_rows_high) += !ok;
    }
  }
  std::printf("iq3_s tile on the device: wrong rows 0-63 %lld, 64-127 %lld (over %d stages)\n",
              static_cast<long long>(wrong_rows_low), static_cast<long long>(wrong_rows_high),
              kSubs / stage_subs);
  EXPECT_EQ(wrong_rows_low, 0);
  EXPECT_EQ(wrong_rows_high, 0);
}

// ---- selection ------------------------------------------------------------------------------
// Arm::kFusedWmma selects the arm through the registry; a layer it does not carry falls back and
// the report says why. Host logic only: runs without a GPU.
TEST(WmmaSelection, RegistryChoiceAndCoverage) {
  synth::LayerSpec spec;
  spec.d = 256;
  spec.f = 256;
  spec.n_expert = 4;
  spec.seed = test::fresh_seed("wmma_selection");
  const synth::SyntheticLayer covered = synth::make_layer(spec);
  spec.gate_type = spec.up_type = GgmlType::Q2_0;
  spec.down_type = GgmlType::IQ3_S;
  const synth::SyntheticLayer uncovered = synth::make_layer(spec);
  EXPECT_TRUE(wmma::wmma_supports(covered.weights));
  const RunReport chosen = cuda::choose(covered.weights, Arm::kFusedWmma, Numerics::kQ8);
  EXPECT_EQ(chosen.arm, Arm::kFusedWmma);
  EXPECT_EQ(chosen.fallback, "");
  EXPECT_NE(cuda::choose(covered.weights, Arm::kFused, Numerics::kQ8).arm, Arm::kFusedWmma)
      << "fused-wmma runs only when named";
  const RunReport fell = cuda::choose(uncovered.weights, Arm::kFusedWmma, Numerics::kQ8);
  EXPECT_EQ(fell.arm, Arm::kProduction);
  EXPECT_NE(fell.fallback.find("fused-wmma (cuda q8) does not carry gate q2_0"), std::string::npos)
      << fell.fallback;
}

}  // namespace
}  // namespace strata
