#include "demo_cuda.hpp"

#include "bench_runner.hpp"
#include "common/error.hpp"

#ifdef STRATA_MOE_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/backend/run_layer.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/device_buffer.hpp"
#include "cuda/common/upload_tensor.hpp"
#endif

namespace strata::cli::demo {

#ifdef STRATA_MOE_HAVE_CUDA
namespace {

template <class T>
cuda::DeviceBuffer<T> upload(const T* host, size_t count) {
  cuda::DeviceBuffer<T> d(count);
  STRATA_CUDA_CHECK(cudaMemcpy(d.get(), host, count * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// A stream and two events, released on every path.
struct Timer {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;

  Timer() {
    STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    STRATA_CUDA_CHECK(cudaEventCreate(&start));
    STRATA_CUDA_CHECK(cudaEventCreate(&stop));
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  ~Timer() {
    if (stop != nullptr) cudaEventDestroy(stop);
    if (start != nullptr) cudaEventDestroy(start);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

}  // namespace

DeviceRuns run_cuda_arms(const MoeLayerWeights& host_weights, const LayerInputs& in,
                         int timed_runs, Numerics numerics) {
  benchrun::require_cuda_device();
  require(timed_runs >= 1, Status::kInvalidArgument, "timed_runs: must be >= 1");
  validate_layer(host_weights);
  DeviceRuns out;
  cudaDeviceProp prop{};
  STRATA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  out.device = prop.name;

  // Each tensor at the start of its allocation (16-byte aligned), as the library uploads a model's.
  cuda::DeviceBuffer<uint8_t> gate, up, down;
  MoeLayerWeights layer = host_weights;
  layer.gate.data = cuda::upload_tensor(host_weights.gate, gate);
  layer.up.data = cuda::upload_tensor(host_weights.up, up);
  layer.down.data = cuda::upload_tensor(host_weights.down, down);

  const auto T = static_cast<size_t>(in.n_tokens), k = static_cast<size_t>(in.k),
             d = static_cast<size_t>(layer.d);
  const cuda::DeviceBuffer<float> x = upload(in.x, T * d);
  const cuda::DeviceBuffer<int32_t> ids = upload(in.ids, T * k);
  const cuda::DeviceBuffer<float> weights = upload(in.weights, T * k);
  cuda::DeviceBuffer<float> y(T * d);
  const cuda::DeviceInputs device_in{x.get(), ids.get(), weights.get(), in.n_tokens, in.k};

  // Each arm the device runs for this layer in the profile, once: a request that would fall back
  // (or name an arm already run, as fused does: it is fused-hopper or fused-sm80) is skipped.
  const Arm requests[] = {Arm::kProduction, Arm::kFused, Arm::kFusedSm80, Arm::kFusedWmma};
  Timer timer;
  cuda::Workspace workspace;
  std::vector<Arm> done;
  for (Arm request : requests) {
    RunReport chosen;
    try {
      chosen = cuda::choose(layer, request, numerics);
    } catch (const Error& e) {
      if (e.status() != Status::kUnsupported) throw;
      continue;
    }
    if (!chosen.fallback.empty() || std::find(done.begin(), done.end(), chosen.arm) != done.end()) continue;
    done.push_back(chosen.arm);
    // NaN bits first, so an arm that leaves rows unwritten cannot pass as equal to the previous one.
    STRATA_CUDA_CHECK(cudaMemsetAsync(y.get(), 0xFF, T * d * sizeof(float), timer.stream));
    // Warm-up: grows the workspace (cudaMalloc) and loads the kernels outside the timed runs.
    cuda::run_chosen(layer, device_in, chosen, workspace, timer.stream, y.get());
    STRATA_CUDA_CHECK(cudaStreamSynchronize(timer.stream));
    std::vector<float> ms(static_cast<size_t>(timed_runs));
    for (float& t : ms) {
      STRATA_CUDA_CHECK(cudaEventRecord(timer.start, timer.stream));
      cuda::run_chosen(layer, device_in, chosen, workspace, timer.stream, y.get());
      STRATA_CUDA_CHECK(cudaEventRecord(timer.stop, timer.stream));
      STRATA_CUDA_CHECK(cudaEventSynchronize(timer.stop));
      STRATA_CUDA_CHECK(cudaEventElapsedTime(&t, timer.start, timer.stop));
    }
    std::sort(ms.begin(), ms.end());
    const size_t mid = ms.size() / 2;
    DeviceArmRun& run = out.arms.emplace_back();
    run.name = arm_name(chosen.arm);  // the arm that ran, as the registry chose it
    run.median_ms = ms.size() % 2 == 1 ? ms[mid] : 0.5 * (double{ms[mid - 1]} + double{ms[mid]});
    run.y.resize(T * d);
    STRATA_CUDA_CHECK(cudaMemcpyAsync(run.y.data(), y.get(), T * d * sizeof(float),
                                      cudaMemcpyDeviceToHost, timer.stream));
    STRATA_CUDA_CHECK(cudaStreamSynchronize(timer.stream));
  }
  return out;
}

#else

DeviceRuns run_cuda_arms(const MoeLayerWeights&, const LayerInputs&, int, Numerics) {
  benchrun::require_cuda_device();
  return {};
}

#endif

}  // namespace strata::cli::demo
