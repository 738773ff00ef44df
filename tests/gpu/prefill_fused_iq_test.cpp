// The CUDA fused arm (STRATA_PF_FUSED=1: gate/up + SwiGLU + requant in one kernel) on IQ3_S
// gate/up + Q2_0 down layers: bitwise against the CUDA production arm (y and every intermediate)
// and the CPU arms, against the double-precision oracles, deterministic, exact zeros for an
// all-zero token; edges of the routing (empty, one-row, tile-boundary and multi-tile experts),
// the flash-next and qwen35-a3b geometries at T = 1, 17, 512, 4096, the bundled vectors, the
// device Q2_0 decode against ggml's vectors, and the fallback rule for layers it does not cover.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bounds.hpp"
#include "common/error.hpp"
#include "cpu/moe_cpu.hpp"
#include "cuda/backend/run_layer.hpp"
#include "cuda/decode/decode.hpp"
#include "cuda/fused/fused_arm.hpp"
#include "cuda/fused/gate_up_swiglu.hpp"
#include "cuda/fused_hopper/hopper_arm.hpp"
#include "decode_vectors.hpp"
#include "formats/registry.hpp"
#include "gpu_test_util.hpp"
#include "layer_run.hpp"
#include "moe_check.hpp"
#include "reference/oracle.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

// Bounds: tests/support/bounds.hpp (declared before the fused kernel was ever measured).
using test::kFusedOverProductionExactFactor;  // fused rel-RMS vs exact <= 1.5x production's
using test::kMaxDifferingElements;            // fused vs production, launch vs launch
using test::DeviceRun;
using test::Stage;
using test::unsorted_rows;

struct LayerCase {
  const char* name;
  int64_t d, f, n_expert;
  int k;
  int64_t n_tokens;
  int routing;   // 0 skewed, 1 uniform, 2 single expert, 3 crafted A (small tile), 4 crafted B (large tile)
  bool oracle;   // also the oracles and the CPU arms (kept to sizes the CPU does in seconds)
};

synth::Routing routing_for(const LayerCase& c, uint64_t seed) {
  switch (c.routing) {
    case 0: return synth::skewed_routing(c.n_tokens, c.n_expert, c.k, seed);
    case 1: return synth::uniform_routing(c.n_tokens, c.n_expert, c.k, seed);
    case 2: return synth::single_expert_routing(c.n_tokens, c.n_expert, c.k, seed);
    case 3: return test::counted_routing(c.n_tokens, c.n_expert, c.k, {0, 1, 16, 17, 64, 65}, seed);
    default: return test::counted_routing(c.n_tokens, c.n_expert, c.k, {0, 1, 63, 64, 65, 129}, seed);
  }
}

// One synthetic layer per geometry and process (flash-next's weights are ~1 GB): a fresh seed per
// run (test::shared_seed: the same whichever test builds it), uploaded once, shared by that
// geometry's chunk sizes.
struct CachedLayer {
  synth::SyntheticLayer host;
  test::DeviceLayerCopy device;
  uint64_t seed = 0;
};

const CachedLayer& layer_for(const LayerCase& c) {
  static std::map<std::string, std::unique_ptr<CachedLayer>> cache;
  const std::string key = std::to_string(c.d) + "/" + std::to_string(c.f) + "/" + std::to_string(c.n_expert);
  auto found = cache.find(key);
  if (found == cache.end()) {
    auto built = std::make_unique<CachedLayer>();  // cached only once complete: a throw caches nothing
    built->seed = test::shared_seed(key);
    synth::LayerSpec spec;
    spec.d = c.d;
    spec.f = c.f;
    spec.n_expert = c.n_expert;
    spec.seed = built->seed;
    built->host = synth::make_layer(spec);
    built->device = test::upload_layer(built->host.weights);
    found = cache.emplace(key, std::move(built)).first;
  }
  return *found->second;
}

class FusedLayer : public ::testing::TestWithParam<LayerCase> {};

TEST_P(FusedLayer, BitwiseEqualToProductionAndWithinOracleBounds) {
  STRATA_REQUIRE_GPU();
  const LayerCase c = GetParam();
  const CachedLayer& layer = layer_for(c);
  const uint64_t seed = test::fresh_seed(c.name);
  SCOPED_TRACE(std::string(c.name) + " layer seed " + std::to_string(layer.seed) + " input seed " + std::to_string(seed));
  const synth::Routing r = routing_for(c, seed + 1);
  const std::vector<float> x = synth::random_activations(c.n_tokens, c.d, seed + 2);
  const LayerInputs in{x.data(), r.ids.data(), r.weights.data(), c.n_tokens, c.k};
  const MoeLayerWeights& dev = layer.device.weights;
  ASSERT_TRUE(cuda::fused::fused_supports(dev));
  const int64_t P = c.n_tokens * c.k;
  const double mean_pairs = static_cast<double>(P) / static_cast<double>(c.n_expert);
  const bool small = cuda::fused::fused_tile_for(mean_pairs) == cuda::fused::FusedTileKind::kSmall;

  DeviceRun run(in, c.d);
  cuda::Workspace prod_ws, fused_ws;
  prod_ws.keep_h = true;
  fused_ws.keep_h = true;
  const std::vector<float> y_prod = run.run(dev, Arm::kProduction, prod_ws);
  const std::vector<float> y_fused_first = run.run(dev, Arm::kFused, fused_ws);  // sizes the workspace
  test::poison_gate_up_h(fused_ws.last(), c.f);
  const std::vector<float> y_fused = run.run(dev, Arm::kFused, fused_ws);

  // ---- fused vs production, bitwise: y and every intermediate --------------------------------
  const cuda::WorkspaceView& pv = prod_ws.last();
  const cuda::WorkspaceView& fv = fused_ws.last();
  const auto gate = unsorted_rows(fv.gate, fv, c.k, c.f), up = unsorted_rows(fv.up, fv, c.k, c.f);
  const auto h = unsorted_rows(fv.h, fv, c.k, c.f), down = unsorted_rows(fv.down, fv, c.k, c.d);
  const auto p_gate = unsorted_rows(pv.gate, pv, c.k, c.f), p_up = unsorted_rows(pv.up, pv, c.k, c.f);
  const auto p_h = unsorted_rows(pv.h, pv, c.k, c.f), p_down = unsorted_rows(pv.down, pv, c.k, c.d);
  const int64_t diff_y = test::count_bitwise_diffs(y_fused.data(), y_prod.data(), run.n_y);
  const int64_t diff_rerun = test::count_bitwise_diffs(y_fused.data(), y_fused_first.data(), run.n_y);
  // Both tile configurations, forced: a configuration changes speed, never a bit.
  int64_t diff_forced[2] = {0, 0};
  const char* forced[2] = {"small", "large"};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(setenv("STRATA_PF_FUSED_TILE", forced[i], 1), 0);
    const std::vector<float> y_forced = run.run(dev, Arm::kFused, fused_ws);
    ASSERT_EQ(unsetenv("STRATA_PF_FUSED_TILE"), 0);
    diff_forced[i] = test::count_bitwise_diffs(y_forced.data(), y_prod.data(), run.n_y);
  }
  // On sm_90a the fused request runs the fused-hopper arm; the sm_80 fused kernels stay checked
  // through Arm::kFusedSm80 in the same process.
  const bool hopper = run.last.arm == Arm::kFusedHopper;
  EXPECT_EQ(run.last.fallback, "");
  if (cuda::fused_hopper::hopper_available()) {
    EXPECT_TRUE(hopper) << "the fused-hopper arm should cover this layer";
  } else {
    EXPECT_EQ(run.last.arm, Arm::kFusedSm80) << "a fused request off sm_90a runs fused-sm80";
  }
  int64_t diff_sm80 = 0, diff_hopper_down = 0;
  if (hopper) {
    const std::vector<float> y_sm80 = run.run(dev, Arm::kFusedSm80, fused_ws);
    EXPECT_EQ(run.last.arm, Arm::kFusedSm80) << "the report names the arm requested";
    diff_sm80 = test::count_bitwise_diffs(y_sm80.data(), y_prod.data(), run.n_y);
    ASSERT_EQ(setenv("STRATA_PF_HOPPER_DOWN", "1", 1), 0);  // the arm's own wgmma down kernel
    test::poison_device(const_cast<float*>(fused_ws.last().down), P * c.d);  // unwritten down rows show
    const std::vector<float> y_hopper_down = run.run(dev, Arm::kFused, fused_ws);
    ASSERT_EQ(unsetenv("STRATA_PF_HOPPER_DOWN"), 0);
    diff_hopper_down = test::count_bitwise_diffs(y_hopper_down.data(), y_prod.data(), run.n_y);
    const auto hd = unsorted_rows(fused_ws.last().down, fused_ws.last(), c.k, c.d);
    diff_hopper_down += test::count_bitwise_diffs(hd.data(), p_down.data(), P * c.d);
    std::printf("%s: vs production differing elements: sm_80 fused kernels (fused-sm80) %lld, "
                "fused-hopper with its wgmma down kernel (STRATA_PF_HOPPER_DOWN=1, y and down rows) %lld\n",
                c.name, static_cast<long long>(diff_sm80), static_cast<long long>(diff_hopper_down));
  }
  const int64_t diff_gate = test::count_bitwise_diffs(gate.data(), p_gate.data(), P * c.f);
  const int64_t diff_up = test::count_bitwise_diffs(up.data(), p_up.data(), P * c.f);
  const int64_t diff_h = test::count_bitwise_diffs(h.data(), p_h.data(), P * c.f);
  const int64_t diff_down = test::count_bitwise_diffs(down.data(), p_down.data(), P * c.d);
  std::printf("%s: %s arm, T %lld, mean %.1f pairs/expert, %s tile; fused vs production differing elements: y %lld, "
              "gate %lld, up %lld, h %lld, down %lld, forced small tile %lld, forced large tile %lld; launch vs launch %lld\n",
              c.name, hopper ? "fused-hopper" : "fused", static_cast<long long>(c.n_tokens), mean_pairs,
              small ? "small" : "large",
              static_cast<long long>(diff_y), static_cast<long long>(diff_gate), static_cast<long long>(diff_up),
              static_cast<long long>(diff_h), static_cast<long long>(diff_down), static_cast<long long>(diff_forced[0]),
              static_cast<long long>(diff_forced[1]), static_cast<long long>(diff_rerun));
  EXPECT_LE(diff_y, kMaxDifferingElements);
  EXPECT_LE(diff_gate, kMaxDifferingElements);
  EXPECT_LE(diff_up, kMaxDifferingElements);
  EXPECT_LE(diff_h, kMaxDifferingElements);
  EXPECT_LE(diff_down, kMaxDifferingElements);
  EXPECT_LE(diff_rerun, kMaxDifferingElements);
  EXPECT_LE(diff_forced[0], kMaxDifferingElements);
  EXPECT_LE(diff_forced[1], kMaxDifferingElements);
  EXPECT_LE(diff_sm80, kMaxDifferingElements);
  EXPECT_LE(diff_hopper_down, kMaxDifferingElements);
  int64_t nan = 0;
  for (float v : y_fused) nan += std::isnan(v);
  for (float v : h) nan += std::isnan(v);
  EXPECT_EQ(nan, 0);

  if (!c.oracle) return;
  // ---- the CPU arms, bitwise ----------------------------------------------------------------
  for (Arm arm : {Arm::kProduction, Arm::kFused}) {
    std::vector<float> y_cpu = test::poisoned(run.n_y);
    run_layer_cpu(layer.host.weights, in, arm, 0, y_cpu.data());
    const int64_t diff_cpu = test::count_bitwise_diffs(y_fused.data(), y_cpu.data(), run.n_y);
    std::printf("%s: fused CUDA vs CPU %s arm differing elements: %lld\n", c.name,
                arm == Arm::kFused ? "fused" : "production", static_cast<long long>(diff_cpu));
    EXPECT_LE(diff_cpu, kMaxDifferingElements);
  }
  // ---- same-quantisation oracle: the gate/up chain and the whole layer -------------------------
  const OracleOutput same = same_quant_oracle(layer.host.weights, in, 0, h.data());
  const auto vs_gate = test::compare_rows(gate.data(), same.gate.data(), P, c.f);
  const auto vs_up = test::compare_rows(up.data(), same.up.data(), P, c.f);
  const auto vs_h = test::compare_rows(h.data(), same.h.data(), P, c.f);
  const auto vs_y = test::compare_rows(y_fused.data(), same.y.data(), c.n_tokens, c.d);
  // ---- exact oracle: no worse than the production arm ------------------------------------------
  const OracleOutput exact = exact_oracle(layer.host.weights, in, 0);
  const auto fused_exact = test::compare_rows(y_fused.data(), exact.y.data(), c.n_tokens, c.d);
  const auto prod_exact = test::compare_rows(y_prod.data(), exact.y.data(), c.n_tokens, c.d);
  std::printf("%s: same-quant gate %.3e / %.3e, up %.3e / %.3e, h %.3e / %.3e, y %.3e / %.3e; exact: fused %.4e, "
              "production %.4e\n",
              c.name, vs_gate.rel_rms, vs_gate.worst_row, vs_up.rel_rms, vs_up.worst_row, vs_h.rel_rms, vs_h.worst_row,
              vs_y.rel_rms, vs_y.worst_row, fused_exact.rel_rms, prod_exact.rel_rms);
  const MoeLayerWeights& w = layer.host.weights;
  test::expect_same_quant(vs_gate, Numerics::kQ8, w.gate.type, Stage::kGate);
  test::expect_same_quant(vs_up, Numerics::kQ8, w.up.type, Stage::kUp);
  test::expect_same_quant(vs_h, Numerics::kQ8, w.up.type, Stage::kH);
  test::expect_same_quant(vs_y, Numerics::kQ8, w.down.type, Stage::kY);
  EXPECT_LE(fused_exact.rel_rms, kFusedOverProductionExactFactor * prod_exact.rel_rms);
}

TEST_P(FusedLayer, DeterministicOverLaunchesStreamsAndWorkspaces) {
  STRATA_REQUIRE_GPU();
  const LayerCase c = GetParam();
  const CachedLayer& layer = layer_for(c);
  const uint64_t seed = test::fresh_seed(c.name);
  SCOPED_TRACE(std::string(c.name) + " input seed " + std::to_string(seed));
  const synth::Routing r = synth::skewed_routing(c.n_tokens, c.n_expert, c.k, seed + 1);
  const std::vector<float> x = synth::random_activations(c.n_tokens, c.d, seed + 2);
  const LayerInputs in{x.data(), r.ids.data(), r.weights.data(), c.n_tokens, c.k};
  DeviceRun run(in, c.d);
  cuda::Workspace ws, other;  // keep_h off: the path a user runs
  const std::vector<float> first = run.run(layer.device.weights, Arm::kFused, ws);
  cudaStream_t stream = nullptr;
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::vector<float> second = run.run(layer.device.weights, Arm::kFused, other, stream);
  const std::vector<float> third = run.run(layer.device.weights, Arm::kFused, ws, stream);
  STRATA_CUDA_CHECK(cudaStreamDestroy(stream));
  const int64_t diff_second = test::count_bitwise_diffs(first.data(), second.data(), run.n_y);
  const int64_t diff_third = test::count_bitwise_diffs(first.data(), third.data(), run.n_y);
  std::printf("%s: determinism differing elements: %lld (other workspace + stream), %lld (same workspace)\n", c.name,
              static_cast<long long>(diff_second), static_cast<long long>(diff_third));
  EXPECT_LE(diff_second, kMaxDifferingElements);
  EXPECT_LE(diff_third, kMaxDifferingElements);
  int64_t nan = 0;
  for (float v : first) nan += std::isnan(v);
  EXPECT_EQ(nan, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Edges, FusedLayer,
    // f is a multiple of Q2_0's 64-value block (down's input); f % 128 == 64 leaves the 128-feature
    // small tile a partial feature block.
    ::testing::Values(LayerCase{"t1", 256, 128, 8, 2, 1, 1, true},
                      LayerCase{"t17_partial_feature_block", 256, 320, 8, 3, 17, 0, true},
                      LayerCase{"one_row_experts", 256, 192, 64, 1, 5, 1, true},
                      LayerCase{"crafted_small_tile", 256, 192, 16, 2, 100, 3, true},
                      LayerCase{"crafted_large_tile", 512, 448, 12, 3, 400, 4, true},
                      LayerCase{"single_expert_many_rows", 256, 192, 16, 2, 300, 2, true},
                      LayerCase{"skewed_many_tiles", 768, 320, 8, 4, 700, 0, true}),
    [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Geometries, FusedLayer,
    ::testing::Values(LayerCase{"flash_next_T1", 2560, 640, 512, 10, 1, 0, true},
                      LayerCase{"flash_next_T17", 2560, 640, 512, 10, 17, 0, true},
                      LayerCase{"flash_next_T512", 2560, 640, 512, 10, 512, 0, false},
                      LayerCase{"flash_next_T4096", 2560, 640, 512, 10, 4096, 0, false},
                      LayerCase{"qwen35_a3b_T1", 2048, 512, 256, 8, 1, 0, true},
                      LayerCase{"qwen35_a3b_T17", 2048, 512, 256, 8, 17, 0, true},
                      LayerCase{"qwen35_a3b_T512", 2048, 512, 256, 8, 512, 0, false},
                      LayerCase{"qwen35_a3b_T4096", 2048, 512, 256, 8, 4096, 0, false}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- the bundled qwen3moe vectors -----------------------------------------------------------
class FusedVectors : public ::testing::TestWithParam<int> {};

TEST_P(FusedVectors, MatchesProductionOraclesAndGgmlFigures) {
  STRATA_REQUIRE_GPU();
  const test::MoeVectors v = test::load_moe_vectors(GetParam());
  const MoeLayerWeights& layer = v.layer.weights;
  const LayerInputs in = v.inputs();
  test::DeviceLayerCopy dev = test::upload_layer(layer);
  ASSERT_TRUE(cuda::fused::fused_supports(dev.weights));
  DeviceRun run(in, layer.d);
  cuda::Workspace prod_ws, fused_ws;
  fused_ws.keep_h = true;
  const std::vector<float> y_prod = run.run(dev.weights, Arm::kProduction, prod_ws);
  const std::vector<float> y = run.run(dev.weights, Arm::kFused, fused_ws);
  const int64_t diff = test::count_bitwise_diffs(y.data(), y_prod.data(), run.n_y);
  std::vector<float> y_cpu = test::poisoned(run.n_y);
  run_layer_cpu(layer, in, Arm::kFused, 0, y_cpu.data());
  const int64_t diff_cpu = test::count_bitwise_diffs(y.data(), y_cpu.data(), run.n_y);

  const auto fused_exact = test::compare_rows(y.data(), v.expected_exact.f32(), v.n_tokens, layer.d);
  const auto prod_exact = test::compare_rows(y_prod.data(), v.expected_exact.f32(), v.n_tokens, layer.d);
  const cuda::WorkspaceView& fv = fused_ws.last();
  const auto gate = unsorted_rows(fv.gate, fv, v.k, layer.f), up = unsorted_rows(fv.up, fv, v.k, layer.f);
  const auto h = unsorted_rows(fv.h, fv, v.k, layer.f);
  const OracleOutput same = same_quant_oracle(layer, in, 0, h.data());
  const auto vs_same = test::compare_rows(y.data(), same.y.data(), v.n_tokens, layer.d);
  const int64_t P = v.n_tokens * v.k;
  const auto vs_gate = test::compare_rows(gate.data(), same.gate.data(), P, layer.f);
  const auto vs_up = test::compare_rows(up.data(), same.up.data(), P, layer.f);
  std::printf("layer %d cuda fused: vs production %lld differing, vs CPU fused %lld; vs exact %.4e / %.4e "
              "(production %.4e, ggml %.4e / %.4e); same-quant y %.3e / %.3e, gate %.3e / %.3e, up %.3e / %.3e\n",
              GetParam(), static_cast<long long>(diff), static_cast<long long>(diff_cpu), fused_exact.rel_rms,
              fused_exact.worst_row, prod_exact.rel_rms, v.ggml_rel_rms, v.ggml_worst_row, vs_same.rel_rms,
              vs_same.worst_row, vs_gate.rel_rms, vs_gate.worst_row, vs_up.rel_rms, vs_up.worst_row);
  EXPECT_LE(diff, kMaxDifferingElements);
  EXPECT_LE(diff_cpu, kMaxDifferingElements);
  EXPECT_LE(fused_exact.rel_rms, kFusedOverProductionExactFactor * prod_exact.rel_rms);
  EXPECT_LE(fused_exact.rel_rms, v.ggml_rel_rms);
  EXPECT_LE(fused_exact.worst_row, v.ggml_worst_row) << "row " << fused_exact.worst_row_index;
  test::expect_same_quant(vs_same, Numerics::kQ8, layer.down.type, Stage::kY);
  test::expect_same_quant(vs_gate, Numerics::kQ8, layer.gate.type, Stage::kGate);
  test::expect_same_quant(vs_up, Numerics::kQ8, layer.up.type, Stage::kUp);
}

TEST_P(FusedVectors, AllZeroTokenGivesExactlyZeroRow) {
  STRATA_REQUIRE_GPU();
  const test::MoeVectors v = test::load_moe_vectors(GetParam());
  const int64_t d = v.layer.weights.d;
  std::vector<float> x(v.x.f32(), v.x.f32() + v.n_tokens * d);
  const int64_t zero_token = v.n_tokens / 3;
  std::fill(x.begin() + zero_token * d, x.begin() + (zero_token + 1) * d, 0.0f);
  LayerInputs in = v.inputs();
  in.x = x.data();
  test::DeviceLayerCopy dev = test::upload_layer(v.layer.weights);
  DeviceRun run(in, d);
  cuda::Workspace ws;
  const std::vector<float> y = run.run(dev.weights, Arm::kFused, ws);
  int64_t nonzero = 0;
  for (int64_t c = 0; c < d; ++c) nonzero += !(y[zero_token * d + c] == 0.0f);
  std::printf("layer %d: non-zero elements in the all-zero token's row: %lld\n", GetParam(),
              static_cast<long long>(nonzero));
  EXPECT_EQ(nonzero, 0);
  double energy = 0.0;
  for (int64_t c = 0; c < d; ++c) energy += std::abs(y[(zero_token + 1) * d + c]);
  EXPECT_GT(energy, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Layers, FusedVectors, ::testing::Values(0, 1));

// ---- Q2_0 (the down format) decoded on the device, against ggml's vectors -----------------------
TEST(FusedDownDecode, Q2_0BlocksBitExactOnDevice) {
  STRATA_REQUIRE_GPU();
  const test::DecodeVectors v = test::load_decode_vectors("q2_0");
  const FormatInfo* info = find_block_format(v.name);
  ASSERT_NE(info, nullptr);
  cuda::DeviceBuffer<uint8_t> blocks(v.blocks.size() + 2);
  STRATA_CUDA_CHECK(cudaMemcpy(blocks.get() + 2, v.blocks.data(), v.blocks.size(), cudaMemcpyHostToDevice));
  cuda::DeviceBuffer<float> out(v.expected.size());
  test::poison_device(out.get(), v.expected.size());
  cuda::decode_blocks_cuda(info->type, blocks.get() + 2, v.n_blocks, out.get(), nullptr);
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got = test::to_host(out.get(), v.expected.size());
  std::string report;
  const int64_t mismatches = test::count_bit_mismatches(v, got.data(), report);
  // The int8 decomposition the GEMMs multiply: scale * code must give the same bits.
  const size_t n_sub = static_cast<size_t>(v.n_blocks) * (v.block_values / 32);
  cuda::DeviceBuffer<int8_t> codes(n_sub * 32);
  cuda::DeviceBuffer<float> scales(n_sub * 2), offsets(n_sub * 2);
  cuda::decode_subblocks_cuda(info->type, blocks.get() + 2, v.n_blocks, codes.get(), scales.get(), offsets.get(),
                              nullptr);
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  const auto h_codes = test::to_host(codes.get(), n_sub * 32);
  const auto h_scales = test::to_host(scales.get(), n_sub * 2);
  std::vector<float> recomposed(v.expected.size());
  for (size_t i = 0; i < recomposed.size(); ++i)
    recomposed[i] = h_scales[(i / 32) * 2 + (i % 32) / 16] * static_cast<float>(h_codes[i]);
  std::string report_int8;
  const int64_t mismatches_int8 = test::count_bit_mismatches(v, recomposed.data(), report_int8);
  std::printf("q2_0: %lld blocks, device decode mismatches %lld, int8 decomposition mismatches %lld\n",
              static_cast<long long>(v.n_blocks), static_cast<long long>(mismatches),
              static_cast<long long>(mismatches_int8));
  EXPECT_EQ(mismatches, 0) << report;
  EXPECT_EQ(mismatches_int8, 0) << report_int8;
}

// ---- the fallback rule ----------------------------------------------------------------------
// A layer whose formats the fused arm does not carry runs on the production arm; the report says
// which arm ran and why the fused one did not.
TEST(FusedFallback, UncoveredFormatsRunOnProductionAndSayWhy) {
  STRATA_REQUIRE_GPU();
  synth::LayerSpec spec;
  spec.d = 256;
  spec.f = 256;
  spec.n_expert = 8;
  spec.gate_type = GgmlType::Q2_0;  // the production arm carries it; the fused gate/up does not
  spec.up_type = GgmlType::Q2_0;
  spec.down_type = GgmlType::IQ3_S;
  spec.seed = test::fresh_seed("fallback");
  const synth::SyntheticLayer host = synth::make_layer(spec);
  test::DeviceLayerCopy dev = test::upload_layer(host.weights);
  ASSERT_FALSE(cuda::fused::fused_supports(dev.weights));
  const std::vector<float> x = synth::random_activations(37, spec.d, spec.seed + 1);
  const synth::Routing r = synth::skewed_routing(37, spec.n_expert, 3, spec.seed + 2);
  const LayerInputs in{x.data(), r.ids.data(), r.weights.data(), 37, 3};
  DeviceRun run(in, spec.d);
  cuda::Workspace prod_ws, fused_ws;
  const std::vector<float> y_prod = run.run(dev.weights, Arm::kProduction, prod_ws);
  EXPECT_EQ(run.last.arm, Arm::kProduction);
  EXPECT_EQ(run.last.fallback, "");
  const std::vector<float> y_a = run.run(dev.weights, Arm::kFused, fused_ws);
  EXPECT_EQ(run.last.arm, Arm::kProduction) << "the report names the arm that ran";
  EXPECT_NE(run.last.fallback.find("fused-sm80 (cuda q8) does not carry gate q2_0"), std::string::npos)
      << run.last.fallback;
  const std::vector<float> y_b = run.run(dev.weights, Arm::kFused, fused_ws);
  std::printf("fallback: %s\n", run.last.fallback.c_str());
  EXPECT_EQ(test::count_bitwise_diffs(y_a.data(), y_prod.data(), run.n_y), 0);
  EXPECT_EQ(test::count_bitwise_diffs(y_b.data(), y_prod.data(), run.n_y), 0);
}

// Each fused arm named on its own runs as named where it carries the layer and the device has
// it, and the report says so; fused-hopper off sm_90a falls back to fused-sm80 and says why.
TEST(FusedFallback, NamedArmsRunAsNamed) {
  STRATA_REQUIRE_GPU();
  const test::MoeVectors v = test::load_moe_vectors(0);
  const LayerInputs in = v.inputs();
  test::DeviceLayerCopy dev = test::upload_layer(v.layer.weights);
  DeviceRun run(in, v.layer.weights.d);
  cuda::Workspace ws;
  const std::vector<float> y_prod = run.run(dev.weights, Arm::kProduction, ws);
  EXPECT_EQ(run.last.arm, Arm::kProduction);
  for (Arm arm : {Arm::kFusedSm80, Arm::kFusedHopper, Arm::kFusedWmma}) {
    SCOPED_TRACE(arm_name(arm));
    const std::vector<float> y = run.run(dev.weights, arm, ws);
    if (arm == Arm::kFusedHopper && !cuda::fused_hopper::hopper_available()) {
      EXPECT_EQ(run.last.arm, Arm::kFusedSm80);
      EXPECT_NE(run.last.fallback.find("sm_90a"), std::string::npos) << run.last.fallback;
    } else {
      EXPECT_EQ(run.last.arm, arm) << run.last.fallback;
      EXPECT_EQ(run.last.fallback, "");
    }
    EXPECT_EQ(run.last.numerics, Numerics::kQ8);
    EXPECT_EQ(test::count_bitwise_diffs(y.data(), y_prod.data(), run.n_y), 0);
  }
}

}  // namespace
}  // namespace strata
