// The backends behind the C API (and the CLI): one object per layer, built once, run many times.
// The CPU backend is here; the CUDA backend (src/cuda/) implements make_cuda_backend,
// make_cuda_host_backend and cuda_device_count when the library is built with CUDA
// (STRATA_MOE_HAVE_CUDA); src/api/no_cuda.cpp stands in for them otherwise.
#pragma once
#include <memory>
#include <string_view>

#include "cpu/moe_cpu.hpp"
#include "pipeline/layer.hpp"
#include "pipeline/numerics.hpp"
#include "reference/oracle.hpp"

namespace strata {

struct RunOptions {
  int threads = 0;              // CPU threads; <= 0: the OpenMP default
  void* cuda_stream = nullptr;  // cudaStream_t (CUDA backend)
  Numerics numerics = Numerics::kQ8;
};

class LayerBackend {
 public:
  virtual ~LayerBackend() = default;
  virtual const char* name() const = 0;  // "cpu", "cuda"
  // in/y: host pointers for the CPU backend, device pointers for CUDA (asynchronous on the
  // stream). Throws strata::Error naming the argument.
  virtual void run(const LayerInputs& in, Arm arm, const RunOptions& options, float* y) = 0;
};

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
