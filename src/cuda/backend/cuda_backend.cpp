// The CUDA LayerBackend behind the C API and the CLI: device-resident weights (native GGUF
// blocks), device inputs and output, asynchronous on the caller's stream.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <string>

#include "api/backend.hpp"
#include "common/error.hpp"
#include "cuda/backend/run_layer.hpp"
#include "cuda/backend/host_backend.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/device_buffer.hpp"
#include "cuda/common/upload_tensor.hpp"
#include "cuda/pipeline/convert.hpp"
#include "pipeline/routing.hpp"

namespace strata {
namespace {

// Throws kUnsupported, before any other CUDA call, unless a device is visible: a machine without a
// GPU (or without a usable driver) gets one clear message instead of a failed allocation.
void require_visible_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    fail(Status::kUnsupported,
         std::string("backend: no CUDA device is visible (") + cudaGetErrorString(status) + ")");
  }
  require(count > 0, Status::kUnsupported, "backend: no CUDA device is visible");
}

// Throws kInvalidArgument naming `what` unless `p` is device (or managed) memory.
void require_device_pointer(const void* p, const char* what) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, p);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error of the query
    fail(Status::kInvalidArgument, std::string(what) + ": not a CUDA device pointer");
  }
  require(attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged,
          Status::kInvalidArgument, std::string(what) + ": not a CUDA device pointer (the CUDA backend reads device memory)");
}

// The CUDA arms carry the plain SwiGLU expert only: a layer with per-expert biases or another
// activation is refused here, naming the part, rather than computed as something else.
void require_plain_layer(const MoeLayerWeights& w) {
  require(!w.has_biases(), Status::kUnsupported,
          fmt::format("backend cuda: layer '{}' has per-expert biases, which the CUDA arms do not "
                      "compute (run it on the cpu backend)",
                      w.gate.name));
  require(w.activation.kind == ActivationKind::kSwiGLU, Status::kUnsupported,
          fmt::format("backend cuda: layer '{}' uses the {} activation, which the CUDA arms do not "
                      "compute (run it on the cpu backend)",
                      w.gate.name, activation_name(w.activation.kind)));
}

class CudaBackend final : public LayerBackend {
 public:
  explicit CudaBackend(const MoeLayerWeights& weights) : weights_(weights) {
    validate_layer(weights_);
    require_plain_layer(weights_);
    require_visible_device();
    require_device_pointer(weights_.gate.data, weights_.gate.name.c_str());
    require_device_pointer(weights_.up.data, weights_.up.name.c_str());
    require_device_pointer(weights_.down.data, weights_.down.name.c_str());
  }

  const char* name() const override { return "cuda"; }
  bool host_memory() const override { return false; }

  RunReport choose(const RunOptions& options) const override {
    return cuda::choose(weights_, options.arm, options.numerics);
  }

  RunReport run(const LayerInputs& in, const RunOptions& options, float* y) override {
    const RunReport chosen = choose(options);
    if (in.n_tokens > 0) {
      require_device_pointer(in.x, "x");
      require_device_pointer(in.ids, "ids");
      require_device_pointer(in.weights, "weights");
      require_device_pointer(y, "y");
    }
    const cuda::DeviceInputs device_in{in.x, in.ids, in.weights, in.n_tokens, in.k};
    const auto stream = static_cast<cudaStream_t>(options.cuda_stream);
    // NOTE: the caller's workspace carries the q8 pipeline; a q10 run still uses the layer's own
    // buffers (Q10Workspace), so it may allocate and synchronise when they grow.
    if (options.scratch != nullptr && chosen.numerics == Numerics::kQ8) {
      // The caller's workspace: nothing shared with other runs, nothing allocated, no event.
      cuda::Workspace external;
      if (in.n_tokens > 0 && in.k >= 1)
        external.use_external(options.scratch, options.scratch_bytes, in.n_tokens, in.k, weights_.d, weights_.f,
                              weights_.n_expert, chosen.arm);
      cuda::run_chosen(weights_, device_in, chosen, external, stream, y);
      return chosen;
    }
    // NOTE: one workspace per layer object. Concurrent runs of one layer take turns enqueueing
    // (the mutex), and each run's stream first waits for the previous run's end (the event), so
    // runs on different streams use the workspace one after the other instead of racing on it.
    // A run captured into a graph neither waits for nor records the event (a capture cannot depend
    // on work outside it): its replays follow the caller's own ordering on its stream.
    std::lock_guard<std::mutex> lock(mutex_);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    STRATA_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
    const bool capturing = capture != cudaStreamCaptureStatusNone;
    if (last_run_done_ == nullptr) {
      if (!capturing) STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&last_run_done_, cudaEventDisableTiming));
    } else if (!capturing) {
      STRATA_CUDA_CHECK(cudaStreamWaitEvent(stream, last_run_done_, 0));
    }
    cuda::run_chosen(weights_, device_in, chosen, workspace_, stream, y);
    if (!capturing) STRATA_CUDA_CHECK(cudaEventRecord(last_run_done_, stream));
    return chosen;
  }

  ~CudaBackend() override {
    if (last_run_done_ != nullptr) cudaEventDestroy(last_run_done_);
  }

  size_t scratch_bytes(int64_t n_tokens, int k, const RunOptions& options) const override {
    if (n_tokens <= 0 || k < 1) return 0;
    const RunReport chosen = choose(options);
    if (chosen.numerics != Numerics::kQ8) return 0;  // q10 runs on the layer's own buffers
    return cuda::Workspace::external_bytes(n_tokens, k, weights_.d, weights_.f, weights_.n_expert, chosen.arm);
  }

  void convert(const void* src, DType from, void* dst, DType to, size_t count, const RunOptions& options) override {
    cuda::launch_convert(src, from, dst, to, count, static_cast<cudaStream_t>(options.cuda_stream));
  }

  void* staging(size_t bytes) override {
    staging_.reserve(bytes);
    return staging_.get();
  }

 private:
  MoeLayerWeights weights_;
  cuda::Workspace workspace_;
  std::mutex mutex_;
  cudaEvent_t last_run_done_ = nullptr;  // recorded on the stream of the latest run
  cuda::DeviceBuffer<uint8_t> staging_;  // 16-bit arrays' f32 copies when the caller gives no workspace
};

class HostCudaBackend final : public LayerBackend {
 public:
  explicit HostCudaBackend(const MoeLayerWeights& host) : weights_(host) {
    validate_layer(host);
    require_plain_layer(host);
    require_visible_device();
    // At the allocations' start: 16-byte aligned, as in a GGUF file.
    weights_.gate.data = cuda::upload_tensor(host.gate, gate_);
    weights_.up.data = cuda::upload_tensor(host.up, up_);
    weights_.down.data = cuda::upload_tensor(host.down, down_);
  }

  const char* name() const override { return "cuda"; }

  RunReport choose(const RunOptions& options) const override {
    return cuda::choose(weights_, options.arm, options.numerics);
  }

  RunReport run(const LayerInputs& in, const RunOptions& options, float* y) override {
    const RunReport chosen = choose(options);
    require(in.n_tokens >= 0 && in.k >= 1, Status::kInvalidArgument, "n_tokens, k: out of range");
    if (in.n_tokens == 0) return chosen;
    validate_routing(in.ids, in.weights, in.n_tokens, in.k, weights_.n_expert, "ids", "weights");
    const auto T = static_cast<size_t>(in.n_tokens), k = static_cast<size_t>(in.k), d = static_cast<size_t>(weights_.d);
    std::lock_guard<std::mutex> lock(mutex_);
    const auto stream = static_cast<cudaStream_t>(options.cuda_stream);
    x_.reserve(T * d);
    ids_.reserve(T * k);
    w_.reserve(T * k);
    y_.reserve(T * d);
    STRATA_CUDA_CHECK(cudaMemcpyAsync(x_.get(), in.x, T * d * sizeof(float), cudaMemcpyHostToDevice, stream));
    STRATA_CUDA_CHECK(cudaMemcpyAsync(ids_.get(), in.ids, T * k * sizeof(int32_t), cudaMemcpyHostToDevice, stream));
    STRATA_CUDA_CHECK(cudaMemcpyAsync(w_.get(), in.weights, T * k * sizeof(float), cudaMemcpyHostToDevice, stream));
    cuda::run_chosen(weights_, cuda::DeviceInputs{x_.get(), ids_.get(), w_.get(), in.n_tokens, in.k}, chosen,
                     workspace_, stream, y_.get());
    STRATA_CUDA_CHECK(cudaMemcpyAsync(y, y_.get(), T * d * sizeof(float), cudaMemcpyDeviceToHost, stream));
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
    return chosen;
  }

 private:
  MoeLayerWeights weights_;
  cuda::DeviceBuffer<uint8_t> gate_, up_, down_;
  cuda::DeviceBuffer<float> x_, w_, y_;
  cuda::DeviceBuffer<int32_t> ids_;
  cuda::Workspace workspace_;
  std::mutex mutex_;
};

}  // namespace

std::unique_ptr<LayerBackend> cuda::make_host_backend(const MoeLayerWeights& host_weights) {
  return std::make_unique<HostCudaBackend>(host_weights);
}

std::unique_ptr<LayerBackend> make_cuda_backend(const MoeLayerWeights& weights) {
  return std::make_unique<CudaBackend>(weights);
}

std::unique_ptr<LayerBackend> make_cuda_host_backend(const MoeLayerWeights& host_weights) {
  return cuda::make_host_backend(host_weights);
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace strata
