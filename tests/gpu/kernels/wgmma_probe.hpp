// A single-warpgroup check of the wgmma primitive (wgmma_m64k32.cuh) and of the B-tile core-matrix
// layout the fused-hopper kernels write: D[64 x 128] = A[64 x 32] * B[128 x 32]^T in int32, A from
// registers, B from shared memory. For tests; needs an sm_90 device and a build with 90a.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace strata::cuda::mma {

// a: [64, 32] int8 row-major; b: [128, 32] int8 row-major (row n = column n of the product);
// d: [64, 128] int32 row-major. Device pointers.
void launch_wgmma_probe(const int8_t* a, const int8_t* b, int32_t* d, cudaStream_t stream);

}  // namespace strata::cuda::mma
