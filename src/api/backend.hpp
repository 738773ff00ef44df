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
#include "pipeline/arm_registry.hpp"
#include "pipeline/layer.hpp"
#include "pipeline/numerics.hpp"
#include "pipeline/run.hpp"

namespace strata {

class LayerBackend {
 public:
  virtual ~LayerBackend() = default;
  virtual const char* name() const = 0;  // "cpu", "cuda"
  // The arm and profile a run with these options takes (the arm registry's choice; no run).
  // Throws Error(kUnsupported) naming the layer and each arm's reason when none carries it.
  virtual RunReport choose(const RunOptions& options) const = 0;
  // in/y: host pointers for the CPU backend, device pointers for CUDA (asynchronous on the
  // stream). Chooses the arm once (choose()), runs it and says what ran. Throws strata::Error
  // naming the argument.
  virtual RunReport run(const LayerInputs& in, const RunOptions& options, float* y) = 0;
  // Whether run() takes host pointers (y can be read once run() returns).
  virtual bool host_memory() const { return true; }

  // Bytes of RunOptions::scratch a run of n_tokens x k with these options needs (0: the backend
  // needs none).
  virtual size_t scratch_bytes(int64_t n_tokens, int k, const RunOptions& options) const;
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

// The workspace a typed run of n_tokens x k with these dtypes and options needs: f32/i32 staging
// for every array not already f32/i32, then the backend's scratch for the arm the options choose;
// each part 256-byte aligned.
size_t typed_workspace_bytes(const LayerBackend& backend, const MoeLayerWeights& weights, const TypedRun& run,
                             const RunOptions& options);
// Widens the inputs into staging, runs the backend, narrows y. Throws Error naming the field.
RunReport run_typed(LayerBackend& backend, const MoeLayerWeights& weights, const TypedRun& run, RunOptions options);

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

// ---- the API edge: the only reader of the arm and profile variables ----------------------------
// The arm and profile the environment names, the defaults of a call that names none (the C API's
// STRATA_MOE_ARM_DEFAULT / STRATA_MOE_NUMERICS_DEFAULT, the CLI without --arm / --numerics):
//   STRATA_PF_FUSED=1|0          fused | production
//   STRATA_PF_FUSED_WMMA=1       fused-wmma (unless STRATA_PF_FUSED=0)
//   STRATA_PF_FUSED_HOPPER=0     a fused arm runs fused-sm80 (=1: no change)
//   STRATA_PF_Q10_HOPPER=0       the same, and a call naming no arm runs fused-sm80
//   STRATA_PF_FUSED_NATIVE=0     every fused arm runs production (=1: no change)
//   STRATA_NUMERICS=q8|q10       the profile
// Unset or empty: no default (the registry's rule, pipeline/run.hpp). Any other value throws
// kInvalidArgument naming the variable and the values it takes.
struct EnvDefaults {
  std::optional<Arm> arm;
  std::optional<Numerics> numerics;
};
EnvDefaults defaults_from_env();

}  // namespace strata
