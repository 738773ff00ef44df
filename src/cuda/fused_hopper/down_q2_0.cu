#include "cuda/fused_hopper/hopper_kernel.cuh"
#include "formats/q2_0.hpp"

namespace strata::cuda::fused_hopper {
template void launch_hopper_down<Q2_0>(const ProductArgs&, HopperTileKind, cudaStream_t);

// The sm_90a image of a kernel is what the runtime loads on an sm_90 device when the build
// includes 90a; any other image of these kernels only traps.
bool hopper_kernels_loaded() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return false;
  if (major != 9 || minor != 0) return false;
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, hopper_product_kernel<Q2_0, HopperLarge<Q2_0, 1, kDownStageValues>>) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.binaryVersion == 90;
}
}  // namespace strata::cuda::fused_hopper
