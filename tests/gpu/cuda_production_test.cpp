// The CUDA production arm against the CPU production arm (bit for bit, y and every
// intermediate) and the double-precision oracles, on synthetic layers aimed at the edges, the
// three IQ3_S/Q2_0 geometries of GPU.md and the bundled qwen3moe vectors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "api/backend.hpp"
#include "common/error.hpp"
#include "cuda/backend/host_backend.hpp"
#include "cpu/moe_cpu.hpp"
#include "cuda/backend/run_layer.hpp"
#include "bounds.hpp"
#include "gpu_test_util.hpp"
#include "layer_run.hpp"
#include "moe_check.hpp"
#include "reference/oracle.hpp"
#include "synth/synth.hpp"
#include "synthetic_case.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

using test::DeviceRun;
using test::Stage;
using test::unsorted_rows;

struct LayerCase {
  const char* name;
  int64_t d, f, n_expert;
  int k;
  int64_t n_tokens;
  int routing;          // 0 skewed, 1 uniform, 2 single expert (empty experts + one with every token)
  bool oracle;          // also check the same-quantisation oracle (small cases)
};

class CudaProductionLayer : public ::testing::TestWithParam<LayerCase> {};
// Determinism runs on the edge cases (the model geometries are checked for it by the fused
// fixture and by every paired run of strata-moe bench).
class CudaProductionDeterminism : public ::testing::TestWithParam<LayerCase> {};

TEST_P(CudaProductionLayer, BitwiseEqualToCpuProductionArm) {
  STRATA_REQUIRE_GPU();
  const LayerCase c = GetParam();
  const uint64_t seed = test::fresh_seed(c.name);
  SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed));
  const test::SyntheticCase sc = test::make_synthetic_case(c.d, c.f, c.n_expert, c.k, c.n_tokens,
                                                           static_cast<test::CaseRouting>(c.routing), seed);
  const synth::SyntheticLayer& host = sc.layer;
  const LayerInputs in = sc.inputs();

  std::vector<float> y_cpu = test::poisoned(c.n_tokens * c.d);
  CpuDebugOutputs debug;
  run_layer_cpu(host.weights, in, Arm::kProduction, 0, y_cpu.data(), &debug);

  test::DeviceLayerCopy dev = test::upload_layer(host.weights);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(dev.weights.gate.data) % 4, 2u);  // 2-byte aligned only
  DeviceRun run(in, c.d);
  cuda::Workspace ws;
  ws.keep_h = true;
  const std::vector<float> y = run.run(dev.weights, Arm::kProduction, ws);

  EXPECT_EQ(test::count_bitwise_diffs(y.data(), y_cpu.data(), run.n_y), 0);
  const cuda::WorkspaceView& v = ws.last();
  const auto gate = unsorted_rows(v.gate, v, c.k, c.f);
  const auto up = unsorted_rows(v.up, v, c.k, c.f);
  const auto h = unsorted_rows(v.h, v, c.k, c.f);
  const auto down = unsorted_rows(v.down, v, c.k, c.d);
  EXPECT_EQ(test::count_bitwise_diffs(gate.data(), debug.gate.data(), gate.size()), 0);
  EXPECT_EQ(test::count_bitwise_diffs(up.data(), debug.up.data(), up.size()), 0);
  EXPECT_EQ(test::count_bitwise_diffs(h.data(), debug.h.data(), h.size()), 0);
  EXPECT_EQ(test::count_bitwise_diffs(down.data(), debug.down.data(), down.size()), 0);

  if (c.oracle) {
    const OracleOutput same = same_quant_oracle(host.weights, in, 0, h.data());
    const auto vs_y = test::compare_rows(y.data(), same.y.data(), c.n_tokens, c.d);
    const auto vs_gate = test::compare_rows(gate.data(), same.gate.data(), c.n_tokens * c.k, c.f);
    const auto vs_up = test::compare_rows(up.data(), same.up.data(), c.n_tokens * c.k, c.f);
    std::printf("%s: same-quant y %.3e / %.3e, gate %.3e / %.3e, up %.3e / %.3e\n", c.name, vs_y.rel_rms,
                vs_y.worst_row, vs_gate.rel_rms, vs_gate.worst_row, vs_up.rel_rms, vs_up.worst_row);
    const MoeLayerWeights& w = host.weights;
    test::expect_same_quant(vs_y, Numerics::kQ8, w.down.type, Stage::kY);
    test::expect_same_quant(vs_gate, Numerics::kQ8, w.gate.type, Stage::kGate);
    test::expect_same_quant(vs_up, Numerics::kQ8, w.up.type, Stage::kUp);
  }
}

TEST_P(CudaProductionDeterminism, DeterministicOverLaunchesAndStreams) {
  STRATA_REQUIRE_GPU();
  const LayerCase c = GetParam();
  const uint64_t seed = test::fresh_seed(c.name);
  SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed));
  const test::SyntheticCase sc =
      test::make_synthetic_case(c.d, c.f, c.n_expert, c.k, c.n_tokens, test::CaseRouting::kSkewed, seed);
  const synth::SyntheticLayer& host = sc.layer;
  const LayerInputs in = sc.inputs();
  test::DeviceLayerCopy dev = test::upload_layer(host.weights);
  DeviceRun run(in, c.d);
  cuda::Workspace ws;
  const std::vector<float> first = run.run(dev.weights, Arm::kProduction, ws);
  cudaStream_t stream = nullptr;
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cuda::Workspace other;
  const std::vector<float> second = run.run(dev.weights, Arm::kProduction, other, stream);
  const std::vector<float> third = run.run(dev.weights, Arm::kProduction, ws, stream);
  STRATA_CUDA_CHECK(cudaStreamDestroy(stream));
  EXPECT_EQ(test::count_bitwise_diffs(first.data(), second.data(), run.n_y), 0);
  EXPECT_EQ(test::count_bitwise_diffs(first.data(), third.data(), run.n_y), 0);
  int64_t nan = 0;
  for (float value : first) nan += std::isnan(value);
  EXPECT_EQ(nan, 0);
}

const auto kEdgeCases = ::testing::Values(LayerCase{"t1", 256, 128, 8, 2, 1, 1, true}, LayerCase{"t17", 256, 192, 8, 3, 17, 0, true},
                      LayerCase{"k1", 512, 64, 16, 1, 29, 1, true},
                      LayerCase{"one_row_experts", 256, 320, 64, 1, 5, 1, true},
                      LayerCase{"single_expert_many_rows", 256, 192, 16, 2, 300, 2, true},
                      LayerCase{"vectors_geometry", 512, 192, 16, 4, 96, 0, true},
                      LayerCase{"many_tiles", 768, 320, 8, 4, 700, 1, true});
INSTANTIATE_TEST_SUITE_P(Edges, CudaProductionLayer, kEdgeCases,
                         [](const auto& info) { return std::string(info.param.name); });
INSTANTIATE_TEST_SUITE_P(Edges, CudaProductionDeterminism, kEdgeCases,
                         [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Geometries, CudaProductionLayer,
    ::testing::Values(LayerCase{"flash_next_T512", 2560, 640, 512, 10, 512, 0, false},
                      LayerCase{"qwen35_a3b_T512", 2048, 512, 256, 8, 512, 0, false},
                      LayerCase{"qwen3_30b_T512", 2048, 768, 128, 8, 512, 0, false}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- the bundled qwen3moe vectors -----------------------------------------------------------
class CudaProductionVectors : public ::testing::TestWithParam<int> {};

TEST_P(CudaProductionVectors, MatchesOraclesGgmlFiguresAndCpu) {
  STRATA_REQUIRE_GPU();
  const test::MoeVectors v = test::load_moe_vectors(GetParam());
  const MoeLayerWeights& layer = v.layer.weights;
  const LayerInputs in = v.inputs();
  test::DeviceLayerCopy dev = test::upload_layer(layer);
  DeviceRun run(in, layer.d);
  cuda::Workspace ws;
  ws.keep_h = true;
  const std::vector<float> y = run.run(dev.weights, Arm::kProduction, ws);

  std::vector<float> y_cpu = test::poisoned(run.n_y);
  run_layer_cpu(layer, in, Arm::kProduction, 0, y_cpu.data());
  EXPECT_EQ(test::count_bitwise_diffs(y.data(), y_cpu.data(), run.n_y), 0);

  const auto vs_exact = test::compare_rows(y.data(), v.expected_exact.f32(), v.n_tokens, layer.d);
  EXPECT_LE(vs_exact.rel_rms, v.ggml_rel_rms);
  EXPECT_LE(vs_exact.worst_row, v.ggml_worst_row) << "row " << vs_exact.worst_row_index;
  const auto h = unsorted_rows(ws.last().h, ws.last(), v.k, layer.f);
  const OracleOutput same = same_quant_oracle(layer, in, 0, h.data());
  const auto vs_same = test::compare_rows(y.data(), same.y.data(), v.n_tokens, layer.d);
  std::printf("layer %d cuda production: vs exact %.3e / %.3e (ggml %.3e / %.3e); vs same-quant %.3e / %.3e\n",
              GetParam(), vs_exact.rel_rms, vs_exact.worst_row, v.ggml_rel_rms, v.ggml_worst_row, vs_same.rel_rms,
              vs_same.worst_row);
  test::expect_same_quant(vs_same, Numerics::kQ8, layer.down.type, Stage::kY);
}

TEST_P(CudaProductionVectors, AllZeroTokenGivesExactlyZeroRow) {
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
  const std::vector<float> y = run.run(dev.weights, Arm::kProduction, ws);
  int64_t nonzero = 0;
  for (int64_t c = 0; c < d; ++c) nonzero += !(y[zero_token * d + c] == 0.0f);
  EXPECT_EQ(nonzero, 0);
  double energy = 0.0;
  for (int64_t c = 0; c < d; ++c) energy += std::abs(y[(zero_token + 1) * d + c]);
  EXPECT_GT(energy, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Layers, CudaProductionVectors, ::testing::Values(0, 1));

// ---- the backends behind the C API --------------------------------------------------------
TEST(CudaBackends, DeviceAndHostBackendsEqualCpuOnVectors) {
  STRATA_REQUIRE_GPU();
  EXPECT_GE(cuda_device_count(), 1);
  const test::MoeVectors v = test::load_moe_vectors(1);
  const MoeLayerWeights& layer = v.layer.weights;
  const LayerInputs in = v.inputs();
  const int64_t n_y = v.n_tokens * layer.d;
  std::vector<float> y_cpu = test::poisoned(n_y);
  run_layer_cpu(layer, in, Arm::kProduction, 0, y_cpu.data());

  test::DeviceLayerCopy dev = test::upload_layer(layer);
  DeviceRun run(in, layer.d);
  std::unique_ptr<LayerBackend> device_backend = make_cuda_backend(dev.weights);
  EXPECT_STREQ(device_backend->name(), "cuda");
  test::poison_device(run.y.get(), n_y);
  RunOptions production_q8;
  production_q8.arm = Arm::kProduction;
  production_q8.numerics = Numerics::kQ8;
  const RunReport ran =
      device_backend->run(LayerInputs{run.inputs.x, run.inputs.ids, run.inputs.weights, v.n_tokens, v.k},
                          production_q8, run.y.get());
  EXPECT_EQ(ran.arm, Arm::kProduction) << "the backend reports the arm it ran";
  EXPECT_EQ(ran.numerics, Numerics::kQ8);
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> y_device = test::to_host(run.y.get(), n_y);
  EXPECT_EQ(test::count_bitwise_diffs(y_device.data(), y_cpu.data(), n_y), 0);

  std::unique_ptr<LayerBackend> host_backend = cuda::make_host_backend(layer);
  std::vector<float> y_host = test::poisoned(n_y);
  host_backend->run(in, production_q8, y_host.data());
  EXPECT_EQ(test::count_bitwise_diffs(y_host.data(), y_cpu.data(), n_y), 0);

  // Host memory handed to the device backend is refused by name, never read as device memory.
  std::vector<float> y_wrong(n_y);
  try {
    device_backend->run(in, production_q8, y_wrong.data());
    ADD_FAILURE() << "host pointers ran on the device backend";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("x:"), std::string::npos) << e.what();
  }
}

// ---- formats the arm does not carry ---------------------------------------------------------
TEST(CudaProductionFormats, UncoveredFormatIsUnsupportedNamingTheTensor) {
  STRATA_REQUIRE_GPU();
  synth::LayerSpec spec;
  spec.d = 256;
  spec.f = 64;
  spec.n_expert = 4;
  spec.up_type = GgmlType::Q8_0;
  spec.seed = test::fresh_seed("unsupported");
  const synth::SyntheticLayer host = synth::make_layer(spec);
  test::DeviceLayerCopy dev = test::upload_layer(host.weights);
  const std::vector<float> x = synth::random_activations(3, spec.d, spec.seed + 1);
  const synth::Routing r = synth::uniform_routing(3, spec.n_expert, 2, spec.seed + 2);
  const LayerInputs in{x.data(), r.ids.data(), r.weights.data(), 3, 2};
  DeviceRun run(in, spec.d);
  cuda::Workspace ws;
  try {
    run.run(dev.weights, Arm::kProduction, ws);
    ADD_FAILURE() << "an uncovered format ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kUnsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find(host.weights.up.name), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("q8_0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
