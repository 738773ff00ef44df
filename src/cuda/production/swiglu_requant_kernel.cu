#include "cuda/common/check.hpp"
#include "cuda/production/swiglu_requant.hpp"
#include "cuda/blocks/quantize_store.cuh"
#include "pipeline/arith.hpp"

namespace strata::cuda::production {
namespace {

// One thread per 32-feature block of one pair row; blocks numbered row-major over [P, f/32].
__global__ void swiglu_requant_kernel(const float* __restrict__ gate,  // [P, f] f32
                                      const float* __restrict__ up,    // [P, f] f32
                                      int64_t n_blocks,                // P * f / 32
                                      int8_t* __restrict__ codes,      // [P, f] int8
                                      float* __restrict__ scales,      // [P, f/32] f32
                                      int32_t* __restrict__ half_sums, // [P, f/16] int32
                                      float* __restrict__ h_out) {     // [P, f] f32 or null
  const int64_t block = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (block >= n_blocks) return;
  const float4* g4 = reinterpret_cast<const float4*>(gate + block * 32);
  const float4* u4 = reinterpret_cast<const float4*>(up + block * 32);
  float h[32];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const float4 g = g4[i], u = u4[i];
    h[4 * i + 0] = swiglu(g.x, u.x);
    h[4 * i + 1] = swiglu(g.y, u.y);
    h[4 * i + 2] = swiglu(g.z, u.z);
    h[4 * i + 3] = swiglu(g.w, u.w);
  }
  if (h_out != nullptr) {
    float4* dst = reinterpret_cast<float4*>(h_out + block * 32);
#pragma unroll
    for (int i = 0; i < 8; ++i) dst[i] = make_float4(h[4 * i], h[4 * i + 1], h[4 * i + 2], h[4 * i + 3]);
  }
  blocks::quantize_and_store_block32(h, block, codes, scales, half_sums);
}

}  // namespace

void launch_swiglu_requant(const float* gate, const float* up, int64_t n_pairs, int64_t f, int8_t* codes,
                           float* scales, int32_t* half_sums, float* h, cudaStream_t stream) {
  const int64_t n_blocks = n_pairs * (f / 32);
  if (n_blocks == 0) return;
  constexpr int kThreads = 128;
  const auto grid = static_cast<unsigned>((n_blocks + kThreads - 1) / kThreads);
  swiglu_requant_kernel<<<grid, kThreads, 0, stream>>>(gate, up, n_blocks, codes, scales, half_sums, h);
  STRATA_CUDA_CHECK_LAUNCH("swiglu_requant_kernel");
}

}  // namespace strata::cuda::production
