#include "demo_cuda.hpp"

#include "bench_runner.hpp"
#include "common/error.hpp"

#ifdef STRATA_MOE_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "cuda/backend/run_layer.hpp"
#include "cuda/fused_q10/q10_arm.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/device_buffer.hpp"
#include "cuda/fused_hopper/hopper_arm.hpp"
#endif

namespace strata::cli::demo {

#ifdef STRATA_MOE_HAVE_CUDA
namespace {


// One tensor's blocks on the device, 2 bytes past an allocation boundary as in a GGUF mapping.
struct DeviceTensor {
  cuda::DeviceBuffer<uint8_t> bytes;
  ExpertTensor view;

  explicit DeviceTensor(const ExpertTensor& host) : view(host) {
    const size_t span = static_cast<size_t>(host.n_expert - 1) * host.expert_stride_bytes +
                        static_cast<size_t>(host.out_features) * host.row_bytes;
    bytes.reserve(span + 2);
    STRATA_CUDA_CHECK(cudaMemcpy(bytes.get() + 2, host.data, span, cudaMemcpyHostToDevice));
    view.data = bytes.get() + 2;
  }
};

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

// Restores the caller's value of an environment switch when the arms are done (or one throws).
class EnvGuard {
 public:
  explicit EnvGuard(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) saved_ = v;
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;
  ~EnvGuard() { set(saved_ ? saved_->c_str() : nullptr); }

  void set(const char* value) const {
    if (value != nullptr)
      setenv(name_, value, 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> saved_;
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

  const DeviceTensor gate(host_weights.gate), up(host_weights.up), down(host_weights.down);
  MoeLayerWeights layer = host_weights;
  layer.gate = gate.view;
  layer.up = up.view;
  layer.down = down.view;

  const auto T = static_cast<size_t>(in.n_tokens), k = static_cast<size_t>(in.k),
             d = static_cast<size_t>(layer.d);
  const cuda::DeviceBuffer<float> x = upload(in.x, T * d);
  const cuda::DeviceBuffer<int32_t> ids = upload(in.ids, T * k);
  const cuda::DeviceBuffer<float> weights = upload(in.weights, T * k);
  cuda::DeviceBuffer<float> y(T * d);
  const cuda::DeviceInputs device_in{x.get(), ids.get(), weights.get(), in.n_tokens, in.k};

  struct ArmChoice {
    const char* name;
    Arm arm;
    const char* wmma_env;    // value of STRATA_PF_FUSED_WMMA for the call, null: unset
    const char* hopper_env;  // value of STRATA_PF_FUSED_HOPPER for the call, null: unset
  };
  // "fused" is the fused-hopper arm on sm_90a and the sm_80 fused kernels elsewhere; fused-sm80
  // forces the latter, so an H200 shows both.
  const ArmChoice choices[] = {{"production", Arm::kProduction, nullptr, nullptr},
                               {"fused", Arm::kFused, nullptr, nullptr},
                               {"fused-sm80", Arm::kFused, nullptr, "0"},
                               {"fused-wmma", Arm::kFused, "1", nullptr}};
  Timer timer;
  cuda::Workspace workspace;
  const EnvGuard wmma_guard("STRATA_PF_FUSED_WMMA"), hopper_guard("STRATA_PF_FUSED_HOPPER");
  const bool q10 = numerics == Numerics::kQ10;
  for (const ArmChoice& choice : choices) {
    // q10 has one CUDA arm in this version, the fused kernels (wgmma f16 on sm_90a, else mma.sync).
    if (q10 && std::string_view(choice.name) != "fused-sm80") continue;
    if (!q10 && std::string_view(choice.name) == "fused-sm80" && !cuda::fused_hopper::hopper_available()) continue;
    wmma_guard.set(choice.wmma_env);
    hopper_guard.set(choice.hopper_env);
    // NaN bits first, so an arm that leaves rows unwritten cannot pass as equal to the previous one.
    STRATA_CUDA_CHECK(cudaMemsetAsync(y.get(), 0xFF, T * d * sizeof(float), timer.stream));
    // Warm-up: grows the workspace (cudaMalloc) and loads the kernels outside the timed runs.
    cuda::run_layer(layer, device_in, choice.arm, workspace, timer.stream, y.get(), nullptr, numerics);
    STRATA_CUDA_CHECK(cudaStreamSynchronize(timer.stream));
    std::vector<float> ms(static_cast<size_t>(timed_runs));
    for (float& t : ms) {
      STRATA_CUDA_CHECK(cudaEventRecord(timer.start, timer.stream));
      cuda::run_layer(layer, device_in, choice.arm, workspace, timer.stream, y.get(), nullptr, numerics);
      STRATA_CUDA_CHECK(cudaEventRecord(timer.stop, timer.stream));
      STRATA_CUDA_CHECK(cudaEventSynchronize(timer.stop));
      STRATA_CUDA_CHECK(cudaEventElapsedTime(&t, timer.start, timer.stop));
    }
    std::sort(ms.begin(), ms.end());
    const size_t mid = ms.size() / 2;
    DeviceArmRun& run = out.arms.emplace_back();
    // On sm_90a the plain fused request runs the fused-hopper arm: the table says which one ran.
    const bool hopper = !q10 && std::string_view(choice.name) == "fused" && cuda::fused_hopper::use_hopper(choice.arm, layer);
    run.name = hopper ? "fused-hopper" : choice.name;
    // q10's CUDA arm runs its Hopper kernels on sm_90a, its mma.sync f16 ones elsewhere.
    if (q10) run.name = cuda::fused_q10::use_q10_hopper(layer) ? "fused-hopper" : "fused-sm80";
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
