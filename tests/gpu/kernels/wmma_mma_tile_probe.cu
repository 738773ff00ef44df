#include "cuda/common/check.hpp"
#include "wmma_probes.hpp"
#include "cuda/mma/mma_tile_16.cuh"

namespace strata::cuda::fused_wmma {
namespace {

// One warp: both slices' operands to plain shared tiles, two chained tile products, the store.
__global__ void mma_tile_16_probe_kernel(const int8_t* __restrict__ a,  // [2][16 x 16] s8 row-major
                                         const int8_t* __restrict__ b,  // [2][16 x 16] s8 col-major
                                         int32_t* __restrict__ c) {     // [16 x 16] s32 row-major
  __shared__ alignas(32) int8_t sa[2][mma::kTile16Elems];
  __shared__ alignas(32) int8_t sb[2][mma::kTile16Elems];
  __shared__ alignas(32) int32_t sc[mma::kTile16Elems];
  const int lane = gpu::lane_id();
  for (int i = lane; i < 2 * mma::kTile16Elems; i += 32) {
    sa[i / mma::kTile16Elems][i % mma::kTile16Elems] = a[i];
    sb[i / mma::kTile16Elems][i % mma::kTile16Elems] = b[i];
  }
  gpu::sync_wave();
  mma::Tile16::Acc acc;
  mma::Tile16::zero(acc);
  mma::mma_tile_16(acc, sa[0], 16, sb[0], 16);
  mma::mma_tile_16(acc, sa[1], 16, sb[1], 16);
  mma::Tile16::store(sc, acc);
  gpu::sync_wave();
  for (int i = lane; i < mma::kTile16Elems; i += 32) c[i] = sc[i];
}

}  // namespace

void launch_mma_tile_16_probe(const int8_t* a, const int8_t* b, int32_t* c, cudaStream_t stream) {
  mma_tile_16_probe_kernel<<<1, 32, 0, stream>>>(a, b, c);
  STRATA_CUDA_CHECK_LAUNCH("mma_tile_16_probe_kernel");
}

}  // namespace strata::cuda::fused_wmma
