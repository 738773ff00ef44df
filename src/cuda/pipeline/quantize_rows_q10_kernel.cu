#include "common/error.hpp"
#include "cuda/common/check.hpp"
#include "cuda/pipeline/quantize_q10.cuh"
#include "cuda/pipeline/quantize_rows_q10.hpp"
#include "pipeline/arith_q10.hpp"

namespace strata::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// One warp per activation block (64 values, or 32 at a row's end); blocks numbered row-major over
// [rows, blocks_per_row], walked by a grid-stride loop. Lane l loads values 2l, 2l + 1 (float2).
__global__ void __launch_bounds__(kThreads)
    quantize_rows_q10_kernel(const float* __restrict__ x,  // [rows, cols] f32
                             int64_t rows, int64_t cols,
                             __half* __restrict__ codes,    // [rows, cols] f16
                             float* __restrict__ scales,    // [rows, blocks_per_row] f32
                             int32_t* __restrict__ sums) {  // [rows, cols/16] int32
  const int lane = threadIdx.x % 32;
  const int64_t blocks_per_row = q10_blocks_per_row(cols);
  const int64_t n_blocks = rows * blocks_per_row;
  const int64_t warps_total = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t block = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
       block < n_blocks; block += warps_total) {
    const int64_t row = block / blocks_per_row, in_row = block % blocks_per_row;
    const int n = q10_block_values(cols, in_row);
    const int64_t first = row * cols + in_row * kQ10BlockValues;  // first value of the block
    float2 v = make_float2(0.0f, 0.0f);
    if (2 * lane < n) v = *reinterpret_cast<const float2*>(x + first + 2 * lane);
    const Q10WarpBlock q = quantize_block_q10_warp(v.x, v.y, n, lane);
    if (2 * lane < n) *reinterpret_cast<__half2*>(codes + first + 2 * lane) = q10_codes_f16x2(q);
    if (lane == 0) scales[block] = q.scale;
    if (lane % 8 == 0 && lane / 8 < n / kQ10SumValues)
      sums[row * (cols / kQ10SumValues) + in_row * (kQ10BlockValues / kQ10SumValues) + lane / 8] =
          q.sum16;
  }
}

}  // namespace

void launch_quantize_rows_q10(const float* x, int64_t rows, int64_t cols, __half* codes,
                              float* scales, int32_t* sums, cudaStream_t stream) {
  require(cols % 32 == 0 && cols > 0 && rows >= 0, Status::kInvalidArgument,
          "quantize_rows_q10: cols must be a positive multiple of 32");
  const int64_t n_blocks = rows * q10_blocks_per_row(cols);
  if (n_blocks == 0) return;
  // Enough warps to cover the device several times over; the loop takes the rest.
  const int64_t wanted = (n_blocks + kWarps - 1) / kWarps;
  const auto grid = static_cast<unsigned>(wanted < 65535 * 8 ? wanted : 65535 * 8);
  quantize_rows_q10_kernel<<<grid, kThreads, 0, stream>>>(x, rows, cols, codes, scales, sums);
  STRATA_CUDA_CHECK_LAUNCH("quantize_rows_q10_kernel");
}

}  // namespace strata::cuda
