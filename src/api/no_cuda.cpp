// Fallbacks for a build without CUDA; src/cuda/ provides the real ones otherwise.
#ifndef STRATA_MOE_HAVE_CUDA
#include "api/backend.hpp"
#include "common/error.hpp"

namespace strata {

std::unique_ptr<LayerBackend> make_cuda_backend(const MoeLayerWeights&) {
  fail(Status::kUnsupported, "backend: strata-moe was built without CUDA");
}

std::unique_ptr<LayerBackend> make_cuda_host_backend(const MoeLayerWeights&) {
  fail(Status::kUnsupported,
       "backend: strata-moe was built without CUDA (configure with -DSTRATA_MOE_CUDA=ON)");
}

int cuda_device_count() {
  return 0;
}

DeviceCaps cuda_device_caps() {
  return {};
}

const std::vector<ArmSpec>& cuda_arm_specs() {
  static const std::vector<ArmSpec> none;
  return none;
}

}  // namespace strata
#endif
