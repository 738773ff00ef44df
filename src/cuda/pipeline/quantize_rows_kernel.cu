#include "cuda/common/check.hpp"
#include "cuda/pipeline/quantize_rows.hpp"
#include "cuda/blocks/quantize_store.cuh"
#include "pipeline/arith.hpp"

namespace strata::cuda {
namespace {

// One thread per 32-value block; blocks are numbered row-major over [rows, cols/32].
__global__ void quantize_rows_kernel(const float* __restrict__ x,  // [rows, cols] f32
                                     int64_t n_blocks,             // rows * cols / 32
                                     int8_t* __restrict__ codes,   // [rows, cols] int8
                                     float* __restrict__ scales,   // [rows, cols/32] f32
                                     int32_t* __restrict__ half_sums) {  // [rows, cols/16] int32
  const int64_t block = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (block >= n_blocks) return;
  float values[32];
  const float4* src = reinterpret_cast<const float4*>(x + block * 32);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const float4 v = src[i];
    values[4 * i + 0] = v.x;
    values[4 * i + 1] = v.y;
    values[4 * i + 2] = v.z;
    values[4 * i + 3] = v.w;
  }
  blocks::quantize_and_store_block32(values, block, codes, scales, half_sums);
}

}  // namespace

void launch_quantize_rows(const float* x, int64_t rows, int64_t cols, int8_t* codes, float* scales,
                          int32_t* half_sums, cudaStream_t stream) {
  const int64_t n_blocks = rows * (cols / 32);
  if (n_blocks == 0) return;
  constexpr int kThreads = 128;
  const auto grid = static_cast<unsigned>((n_blocks + kThreads - 1) / kThreads);
  quantize_rows_kernel<<<grid, kThreads, 0, stream>>>(x, n_blocks, codes, scales, half_sums);
  STRATA_CUDA_CHECK_LAUNCH("quantize_rows_kernel");
}

}  // namespace strata::cuda
