// The backends behind the C API (and the CLI): one object per layer, built once, run many times.
// The CPU backend is here; the CUDA backend (src/cuda/) implements make_cuda_backend,
// make_cuda_host_backend and cuda_device_count when the library is built with CUDA
// (STRATA_MOE_HAVE_CUDA); src/api/no_cuda.cpp stands in for them otherwise.
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "common/dtype.hpp"
#include "cpu/moe_cpu.hpp"
#include "pipeline/layer.hpp"
#include "pipeline/numerics.hpp"
#include "reference/oracle.hpp"

namespace strata {

struct RunOptions {
  int threads = 0;              // CPU threads; <= 0: the OpenMP default
  void* cuda_stream = nullptr;  // cudaStream_t (CUDA backend)
  Numerics numerics = Numerics::kQ8;
  // The backend's scratch for this run (scratch_bytes of it, in the backend's memory), or null:
  // the backend's own buffers.
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
};

class LayerBackend {
 public:
  virtual ~LayerBackend() = default;
  virtual const char* name() const = 0;  // "cpu", "cuda"
  // in/y: host pointers for the CPU backend, device pointers for CUDA (asynchronous on the
  // stream). Throws strata::Error naming the argument.
  virtual void run(const LayerInputs& in, Arm arm, const RunOptions& options, float* y) = 0;

  // Bytes of RunOptions::scratch a run of n_tokens x k needs (0: the backend needs none).
  virtual size_t scratch_bytes(int64_t n_tokens, int k) const;
  // count elements from src (type `from`) to dst (type `to`) in the backend's memory: host loops
  // here, a kernel on options.cuda_stream for CUDA. Conversions are those of common/dtype.hpp;
  // i64 -> i32 turns a value outside [0, 2^31) into -1 (an id every check refuses).
  virtual void convert(const void* src, DType from, void* dst, DType to, size_t count,
                       const RunOptions& options);
  // A buffer of at least `bytes` in the backend's memory, kept by the backend and reused by the
  // next call (hold staging_mutex while it is in use). May allocate.
  virtual void* staging(size_t bytes);
  std::mutex staging_mutex;

 private:
  std::vector<std::byte> host_staging_;
};

// The arrays of one typed run (the C API's strata_moe_run_args, checked).
struct TypedRun {
  const void* x = nullptr;
  DType x_dtype = DType::kF32;
  const void* ids = nullptr;
  DType ids_dtype = DType::kI32;
  const void* weights = nullptr;
  DType weights_dtype = DType::kF32;
  void* y = nullptr;
  DType y_dtype = DType::kF32;
  int64_t n_tokens = 0;
  int k = 0;
  void* workspace = nullptr;  // null: the backend's own buffers
  size_t workspace_bytes = 0;
};

// The workspace a typed run of n_tokens x k with these dtypes needs: f32/i32 staging for every
// array not already f32/i32, then the backend's scratch; each part 256-byte aligned.
size_t typed_workspace_bytes(const LayerBackend& backend, const MoeLayerWeights& weights, const TypedRun& run);
// Widens the inputs into staging, runs the backend, narrows y. Throws Error naming the field.
void run_typed(LayerBackend& backend, const MoeLayerWeights& weights, const TypedRun& run, Arm arm,
               RunOptions options);

// `weights` views host memory (CPU) or device memory (CUDA); the backend keeps a copy of the
// views, never of the data.
std::unique_ptr<LayerBackend> make_cpu_backend(const MoeLayerWeights& weights);
// Both CUDA factories throw kUnsupported when the build has no CUDA backend or no CUDA device is
// visible.
std::unique_ptr<LayerBackend> make_cuda_backend(const MoeLayerWeights& weights);
// For callers holding host memory: copies the weights to the device once; run() takes host
// x/ids/weights and y, validates the routing on the host and synchronises before returning.
std::unique_ptr<LayerBackend> make_cuda_host_backend(const MoeLayerWeights& host_weights);
// 0 in a build without CUDA and on a machine without a visible device.
int cuda_device_count();

// A backend over HOST memory by name (the CLI's --backend): "cpu" -> make_cpu_backend,
// "cuda" -> make_cuda_host_backend; any other name throws kInvalidArgument naming --backend.
std::unique_ptr<LayerBackend> make_host_memory_backend(std::string_view backend,
                                                       const MoeLayerWeights& host_weights);

// The arm the environment asks for: STRATA_PF_FUSED=1 selects fused, anything else production.
Arm arm_from_env();

// The profile the environment asks for: STRATA_NUMERICS=q8|q10, q8 when unset. Any other value
// throws kInvalidArgument naming the variable.
Numerics numerics_from_env();

}  // namespace strata
