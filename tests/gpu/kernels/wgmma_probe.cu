#include "cuda/common/async_sm90.cuh"
#include "cuda/common/check.hpp"
#include "cuda/mma/wgmma_m64k32.cuh"
#include "wgmma_probe.hpp"

namespace strata::cuda::mma {
namespace {

constexpr int kN = 128, kK = 32;
constexpr uint32_t kLeading = 128;     // K-adjacent core matrices
constexpr uint32_t kStride = kK * 8;   // N-adjacent core matrices (8 columns x 32 bytes)

__global__ void __launch_bounds__(128) wgmma_probe_kernel(const int8_t* a, const int8_t* b, int32_t* d) {
  __shared__ alignas(128) int8_t tile[kN * kK];
  const int t = threadIdx.x;
  // Column n, bytes 16h..16h+15 -> core matrix (n / 8, h), row n % 8: the fused-hopper layout.
  for (int i = t; i < kN * 2; i += 128) {
    const int n = i / 2, h = i % 2;
    const uint4 v = *reinterpret_cast<const uint4*>(b + n * kK + 16 * h);
    *reinterpret_cast<uint4*>(tile + (n / 8) * kStride + h * kLeading + (n % 8) * 16) = v;
  }
  fence_proxy_async_shared();
  __syncthreads();
  const int warp = t / 32, lane = t % 32, group = lane / 4, tig = lane % 4;
  const int row = 16 * warp + group;
  const uint32_t frag[4] = {*reinterpret_cast<const uint32_t*>(a + row * kK + 4 * tig),
                            *reinterpret_cast<const uint32_t*>(a + (row + 8) * kK + 4 * tig),
                            *reinterpret_cast<const uint32_t*>(a + row * kK + 16 + 4 * tig),
                            *reinterpret_cast<const uint32_t*>(a + (row + 8) * kK + 16 + 4 * tig)};
  int32_t acc[kN / 2];
  for (int r = 0; r < kN / 2; ++r) acc[r] = 0;
  fence_registers(acc);
  wgmma_fence();
  wgmma_m64n128k32_s8_rs(acc, frag, wgmma_desc(shared_address(tile), kLeading, kStride));
  wgmma_commit();
  wgmma_wait<0>();
  fence_registers(acc);
  for (int j = 0; j < kN / 8; ++j)
    for (int h = 0; h < 2; ++h)
      for (int c = 0; c < 2; ++c) d[(row + 8 * h) * kN + 8 * j + 2 * tig + c] = acc[4 * j + 2 * h + c];
}

}  // namespace

void launch_wgmma_probe(const int8_t* a, const int8_t* b, int32_t* d, cudaStream_t stream) {
  wgmma_probe_kernel<<<1, 128, 0, stream>>>(a, b, d);
  STRATA_CUDA_CHECK_LAUNCH("wgmma_probe_kernel");
}

}  // namespace strata::cuda::mma
