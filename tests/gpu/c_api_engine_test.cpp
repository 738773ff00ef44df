// The engine path of the C API on a CUDA device: bf16/f16 activations and outputs, int64 ids and
// a caller workspace give the bits of the f32 CPU run; a run with a workspace is captured in a
// CUDA graph and its replays give the same bits on new inputs.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "cuda/fused_hopper/hopper_arm.hpp"
#include "gpu_test_util.hpp"
#include "moe_check.hpp"
#include "strata_moe.h"
#include "strata_moe/layer.hpp"
#include "synth/synth.hpp"
#include "synthetic_case.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

strata_moe_tensor_desc desc_of(const ExpertTensor& t) {
  return {static_cast<uint32_t>(t.type), t.data, t.in_features, t.out_features, t.n_expert, t.expert_stride_bytes,
          t.name.c_str()};
}

strata_moe_layer_desc desc_of(const MoeLayerWeights& w) {
  return {w.d, w.f, w.n_expert, desc_of(w.gate), desc_of(w.up), desc_of(w.down)};
}

struct Inputs {
  std::vector<float> x;
  synth::Routing routing;
};

Inputs make_inputs(uint64_t seed, int64_t n_tokens, int64_t d, int64_t n_expert, int k) {
  return {synth::random_activations(n_tokens, d, seed), synth::skewed_routing(n_tokens, n_expert, k, seed + 1)};
}

// The reference: the f32 run on the CPU backend in the same profile (every CUDA arm of a profile
// gives its bits).
std::vector<float> cpu_run(strata_moe::Layer& cpu, const std::vector<float>& x, const synth::Routing& r,
                           int64_t n_tokens, int k, int64_t d,
                           strata_moe_numerics numerics = STRATA_MOE_NUMERICS_Q8) {
  std::vector<float> y = test::poisoned(n_tokens * d);
  strata_moe_run_options options = strata_moe::run_options();
  options.numerics = numerics;
  cpu.run(x.data(), r.ids.data(), r.weights.data(), n_tokens, k, y.data(), &options);
  return y;
}

TEST(CApiEngineCuda, SixteenBitRunsWithAWorkspaceEqualTheCpuF32Run) {
  STRATA_REQUIRE_GPU();
  const test::MoeVectors v = test::load_moe_vectors(1);
  const MoeLayerWeights& host = v.layer.weights;
  const int64_t d = host.d, T = 77;
  const int k = 4;
  strata_moe::Layer cpu(STRATA_MOE_BACKEND_CPU, desc_of(host));
  test::DeviceLayerCopy device = test::upload_layer(host);
  strata_moe::Layer gpu(STRATA_MOE_BACKEND_CUDA, desc_of(device.weights));
  const uint64_t seed = test::fresh_seed("c_api_engine_cuda");
  SCOPED_TRACE("seed " + std::to_string(seed));
  Inputs in = make_inputs(seed, T, d, host.n_expert, k);
  for (bool bf16 : {true, false}) {
    SCOPED_TRACE(bf16 ? "bf16" : "f16");
    std::vector<uint16_t> x16(in.x.size());
    std::vector<float> x_wide(in.x.size());
    for (size_t i = 0; i < in.x.size(); ++i) {
      x16[i] = bf16 ? f32_to_bf16(in.x[i]) : f32_to_f16(in.x[i]);
      x_wide[i] = bf16 ? bf16_to_f32(x16[i]) : f16_to_f32(x16[i]);
    }
    const std::vector<float> ref = cpu_run(cpu, x_wide, in.routing, T, k, d);
    std::vector<int64_t> ids64(in.routing.ids.begin(), in.routing.ids.end());
    auto d_x = test::to_device(x16);
    auto d_ids = test::to_device(ids64);
    auto d_w = test::to_device(in.routing.weights);
    cuda::DeviceBuffer<uint16_t> d_y(static_cast<size_t>(T * d));
    STRATA_CUDA_CHECK(cudaMemset(d_y.get(), 0xff, static_cast<size_t>(T * d) * 2));
    cudaStream_t stream;
    STRATA_CUDA_CHECK(cudaStreamCreate(&stream));
    strata_moe_run_options options = strata_moe::run_options();
    options.cuda_stream = stream;
    options.numerics = STRATA_MOE_NUMERICS_Q8;
    for (strata_moe_arm arm : {STRATA_MOE_ARM_PRODUCTION, STRATA_MOE_ARM_FUSED, STRATA_MOE_ARM_FUSED_SM80,
                               STRATA_MOE_ARM_FUSED_WMMA}) {
      options.arm = arm;
      strata_moe_run_report report = strata_moe::run_report();
      options.report = &report;
      strata_moe_run_args args = strata_moe::run_args();
      args.x = d_x.get();
      args.x_dtype = bf16 ? STRATA_MOE_DTYPE_BF16 : STRATA_MOE_DTYPE_F16;
      args.ids = d_ids.get();
      args.ids_dtype = STRATA_MOE_DTYPE_I64;
      args.weights = d_w.get();
      args.y = d_y.get();
      args.y_dtype = args.x_dtype;
      args.n_tokens = T;
      args.k = k;
      args.options = &options;
      const size_t bytes = gpu.workspace_bytes(args);
      strata_moe_run_args any_arm = args;
      any_arm.options = nullptr;  // sized for a run on any arm
      EXPECT_GE(gpu.workspace_bytes(any_arm), bytes) << strata_moe_arm_name(arm);
      cuda::DeviceBuffer<uint8_t> workspace(bytes);
      STRATA_CUDA_CHECK(cudaMemset(workspace.get(), 0xa5, bytes));
      args.workspace = workspace.get();
      args.workspace_bytes = bytes;
      gpu.run(args);
      STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
      const std::vector<uint16_t> y = test::to_host(d_y.get(), static_cast<size_t>(T * d));
      int64_t differ = 0;
      for (size_t i = 0; i < y.size(); ++i) differ += y[i] != (bf16 ? f32_to_bf16(ref[i]) : f32_to_f16(ref[i]));
      EXPECT_EQ(differ, 0) << strata_moe_arm_name(arm);
      // The report names the arm that ran: the one named (fused: the device's fused kernels).
      if (arm == STRATA_MOE_ARM_FUSED)
        EXPECT_TRUE(report.arm == STRATA_MOE_ARM_FUSED_HOPPER || report.arm == STRATA_MOE_ARM_FUSED_SM80)
            << strata_moe_arm_name(report.arm);
      else
        EXPECT_EQ(report.arm, arm) << strata_moe_arm_name(report.arm) << ": " << report.fallback;
      EXPECT_STREQ(report.fallback, "");
      EXPECT_EQ(report.numerics, STRATA_MOE_NUMERICS_Q8);
    }
    STRATA_CUDA_CHECK(cudaStreamDestroy(stream));
  }
}

// An overflow inside gate/up (gate -inf, so h NaN beside finite values of its requantisation
// block) reaches y as NaN in every element on every CUDA arm in both profiles, as on the CPU arms
// (finite_test.cpp, where the run is then refused); where the NaN was dropped from the block's
// max, y came back finite. A device run does not scan y, so it returns OK.
TEST(CApiEngineCuda, GateOverflowGivesANanYOnEveryArmAndProfile) {
  STRATA_REQUIRE_GPU();
  const uint64_t seed = test::fresh_seed("gate_overflow_cuda");
  SCOPED_TRACE("seed " + std::to_string(seed));
  const test::OverflowCase o = test::make_gate_overflow_case(seed);
  const MoeLayerWeights& host = o.c.layer.weights;
  test::DeviceLayerCopy device = test::upload_layer(host);
  strata_moe::Layer gpu(STRATA_MOE_BACKEND_CUDA, desc_of(device.weights));
  const int64_t T = o.c.n_tokens, d = host.d;
  // The same tokens with x's first value 1: nothing overflows (which arm runs the layer).
  std::vector<float> benign = o.c.x;
  for (int64_t t = 0; t < T; ++t) benign[t * d] = 1.0f;
  const auto d_benign = test::to_device(benign);
  const auto d_x = test::to_device(o.c.x);
  const auto d_ids = test::to_device(o.c.routing.ids);
  const auto d_w = test::to_device(o.c.routing.weights);
  cuda::DeviceBuffer<float> d_y(static_cast<size_t>(T * d));
  for (strata_moe_numerics numerics : {STRATA_MOE_NUMERICS_Q8, STRATA_MOE_NUMERICS_Q10})
    for (strata_moe_arm arm : {STRATA_MOE_ARM_PRODUCTION, STRATA_MOE_ARM_FUSED_SM80,
                               STRATA_MOE_ARM_FUSED_HOPPER, STRATA_MOE_ARM_FUSED_WMMA}) {
      SCOPED_TRACE(std::string(numerics == STRATA_MOE_NUMERICS_Q8 ? "q8 " : "q10 ") +
                   strata_moe_arm_name(arm));
      strata_moe_run_options options = strata_moe::run_options();
      options.numerics = numerics;
      options.arm = arm;
      strata_moe_run_report report = strata_moe::run_report();
      options.report = &report;
      test::poison_device(d_y.get(), static_cast<size_t>(T * d));
      gpu.run(d_benign.get(), d_ids.get(), d_w.get(), T, o.c.k, d_y.get(), &options);
      const std::vector<float> y = test::to_host(d_y.get(), static_cast<size_t>(T * d));
      int64_t finite = 0;
      for (float v : y) finite += std::isfinite(v);
      EXPECT_EQ(finite, T * d);
      SCOPED_TRACE(std::string("ran ") + strata_moe_arm_name(report.arm) + " " + report.fallback);
      if (numerics == STRATA_MOE_NUMERICS_Q10 && arm == STRATA_MOE_ARM_FUSED_HOPPER &&
          cuda::fused_hopper::hopper_available()) {
        EXPECT_EQ(report.arm, STRATA_MOE_ARM_FUSED_HOPPER);
      }
      options.report = nullptr;
      test::poison_device(d_y.get(), static_cast<size_t>(T * d));  // 0xFFFFFFFF, not the run's NaN
      gpu.run(d_x.get(), d_ids.get(), d_w.get(), T, o.c.k, d_y.get(), &options);
      const std::vector<float> y_nan = test::to_host(d_y.get(), static_cast<size_t>(T * d));
      int64_t nan = 0, poison = 0;
      for (float v : y_nan) {
        nan += std::isnan(v);
        poison += std::bit_cast<uint32_t>(v) == 0xFFFFFFFFu;
      }
      EXPECT_EQ(nan, T * d);
      EXPECT_EQ(poison, 0);
    }
}

// One capture of a run and three replays on new inputs, against the CPU run of the same profile:
// q8 on the production arm with a workspace (nothing to warm up), or q10 on the default arm after a
// run at the same shape has grown the layer's own buffers (the captured run must not wait for that
// run's event: a capture cannot depend on work outside it).
void capture_and_replay(strata_moe_numerics numerics) {
  const test::MoeVectors v = test::load_moe_vectors(0);
  const MoeLayerWeights& host = v.layer.weights;
  const int64_t d = host.d, T = 96;
  const int k = 4;
  strata_moe::Layer cpu(STRATA_MOE_BACKEND_CPU, desc_of(host));
  test::DeviceLayerCopy device = test::upload_layer(host);
  strata_moe::Layer gpu(STRATA_MOE_BACKEND_CUDA, desc_of(device.weights));
  const uint64_t seed = test::fresh_seed("c_api_engine_graph");
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Inputs first = make_inputs(seed, T, d, host.n_expert, k);
  const Inputs second = make_inputs(seed + 10, T, d, host.n_expert, k);

  cuda::DeviceBuffer<float> d_x(static_cast<size_t>(T * d)), d_w(static_cast<size_t>(T * k)),
      d_y(static_cast<size_t>(T * d));
  cuda::DeviceBuffer<int32_t> d_ids(static_cast<size_t>(T * k));
  cudaStream_t stream;
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  strata_moe_run_options options = strata_moe::run_options();
  options.cuda_stream = stream;
  options.numerics = numerics;
  if (numerics == STRATA_MOE_NUMERICS_Q8) options.arm = STRATA_MOE_ARM_PRODUCTION;
  strata_moe_run_args args = strata_moe::run_args();
  args.x = d_x.get();
  args.ids = d_ids.get();
  args.weights = d_w.get();
  args.y = d_y.get();
  args.n_tokens = T;
  args.k = k;
  args.options = &options;
  const size_t bytes = gpu.workspace_bytes(args);
  if (numerics == STRATA_MOE_NUMERICS_Q8) {
    ASSERT_GT(bytes, 0u);  // q10: the layer's buffers, and f32 inputs need no staging
  }
  cuda::DeviceBuffer<uint8_t> workspace(bytes);
  args.workspace = bytes > 0 ? workspace.get() : nullptr;
  args.workspace_bytes = bytes;

  auto load = [&](const Inputs& in) {
    STRATA_CUDA_CHECK(cudaMemcpyAsync(d_x.get(), in.x.data(), in.x.size() * 4, cudaMemcpyHostToDevice, stream));
    STRATA_CUDA_CHECK(cudaMemcpyAsync(d_ids.get(), in.routing.ids.data(), in.routing.ids.size() * 4,
                                      cudaMemcpyHostToDevice, stream));
    STRATA_CUDA_CHECK(cudaMemcpyAsync(d_w.get(), in.routing.weights.data(), in.routing.weights.size() * 4,
                                      cudaMemcpyHostToDevice, stream));
    STRATA_CUDA_CHECK(cudaMemsetAsync(d_y.get(), 0xff, static_cast<size_t>(T * d) * 4, stream));
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  load(first);
  if (numerics == STRATA_MOE_NUMERICS_Q10) {  // the warm-up: grows the layer's buffers
    ASSERT_EQ(strata_moe_layer_run_ex(gpu.get(), &args), STRATA_MOE_OK) << strata_moe_last_error();
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
    load(first);
  }
  cudaGraph_t graph;
  // NOTE: global capture mode: any allocation or synchronising call inside the run fails it (the
  // tests' per-launch synchronisation too: paused for the capture, the replays are checked).
  strata_moe_status status = STRATA_MOE_OK;
  cudaError_t end = cudaSuccess;
  {
    const test::SyncCheckPause pause;
    STRATA_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    status = strata_moe_layer_run_ex(gpu.get(), &args);
    end = cudaStreamEndCapture(stream, &graph);
  }
  ASSERT_EQ(status, STRATA_MOE_OK) << strata_moe_last_error();
  ASSERT_EQ(end, cudaSuccess) << cudaGetErrorString(end);
  cudaGraphExec_t exec;
  STRATA_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (const Inputs* in : {&first, &second, &first}) {
    load(*in);
    STRATA_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<float> y = test::to_host(d_y.get(), static_cast<size_t>(T * d));
    const std::vector<float> ref = cpu_run(cpu, in->x, in->routing, T, k, d, numerics);
    EXPECT_EQ(test::count_bitwise_diffs(y.data(), ref.data(), T * d), 0);
  }
  STRATA_CUDA_CHECK(cudaGraphExecDestroy(exec));
  STRATA_CUDA_CHECK(cudaGraphDestroy(graph));
  STRATA_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(CApiEngineCuda, GraphCaptureAndReplayGiveTheSameBits) {
  STRATA_REQUIRE_GPU();
  capture_and_replay(STRATA_MOE_NUMERICS_Q8);
}

TEST(CApiEngineCuda, Q10GraphCaptureAfterAWarmUpGivesTheSameBits) {
  STRATA_REQUIRE_GPU();
  capture_and_replay(STRATA_MOE_NUMERICS_Q10);
}

}  // namespace
}  // namespace strata
