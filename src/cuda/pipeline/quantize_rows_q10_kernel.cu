#include "common/error.hpp"
#include "cuda/common/check.hpp"
#include "cuda/pipeline/quantize_q10.cuh"
#include "cuda/pipeline/quantize_rows_q10.hpp"
#include "pipeline/arith_q10.hpp"

namespace strata::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// Blocks per warp and pass: a half-warp per block, kRounds rounds whose loads are all issued before
// the first block is quantised (the kernel is bound by the loads in flight: one 8-byte load per
// lane ran at half the memory's rate, bench/results/2026-12-07.md call 73).
constexpr int kRounds = 2;
constexpr int kBlocksPerWarp = 2 * kRounds;

// Activation blocks (64 values, or 32 at a row's end) numbered row-major over [rows,
// blocks_per_row]; a warp takes kBlocksPerWarp consecutive ones, round r's two blocks by its two
// halves, walked by a grid-stride loop. Lane s of a half loads values 4s .. 4s + 3 (float4: x is
// 16-byte aligned and cols % 32 == 0, so every block starts 16-byte aligned).
__global__ void __launch_bounds__(kThreads)
    quantize_rows_q10_kernel(const float* __restrict__ x,  // [rows, cols] f32
                             int64_t rows, int64_t cols,
                             __half* __restrict__ codes,    // [rows, cols] f16
                             float* __restrict__ scales,    // [rows, blocks_per_row] f32
                             int32_t* __restrict__ sums) {  // [rows, cols/16] int32
  const int lane = threadIdx.x % 32, half = lane / 16, sub = lane % 16;
  const int64_t blocks_per_row = q10_blocks_per_row(cols);
  const int64_t n_blocks = rows * blocks_per_row;
  const int64_t warps_total = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t base = (static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32) * kBlocksPerWarp;
       base < n_blocks; base += warps_total * kBlocksPerWarp) {
    int64_t block[kRounds], first[kRounds];
    int n[kRounds];
    float4 v[kRounds];
#pragma unroll
    for (int r = 0; r < kRounds; ++r) {
      block[r] = base + 2 * r + half;
      n[r] = 0;
      first[r] = 0;
      v[r] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (block[r] < n_blocks) {
        const int64_t row = block[r] / blocks_per_row, in_row = block[r] % blocks_per_row;
        n[r] = q10_block_values(cols, in_row);
        first[r] = row * cols + in_row * kQ10BlockValues;  // first value of the block
        if (4 * sub < n[r]) v[r] = *reinterpret_cast<const float4*>(x + first[r] + 4 * sub);
      }
    }
#pragma unroll
    for (int r = 0; r < kRounds; ++r) {
      const Q10HalfWarpBlock q = quantize_block_q10_half(v[r], n[r], sub);
      if (4 * sub < n[r]) *reinterpret_cast<uint2*>(codes + first[r] + 4 * sub) = q10_codes_f16x4(q);
      if (n[r] > 0 && sub == 0) scales[block[r]] = q.scale;
      if (sub % 4 == 0 && sub / 4 < n[r] / kQ10SumValues)
        sums[first[r] / kQ10SumValues + sub / 4] = q.sum16;  // cols % 16 == 0: row * cols / 16 + in_row * 4
    }
  }
}

}  // namespace

void launch_quantize_rows_q10(const float* x, int64_t rows, int64_t cols, __half* codes,
                              float* scales, int32_t* sums, cudaStream_t stream) {
  require(cols % 32 == 0 && cols > 0 && rows >= 0, Status::kInvalidArgument,
          "quantize_rows_q10: cols must be a positive multiple of 32");
  require(reinterpret_cast<uintptr_t>(x) % 16 == 0, Status::kInvalidArgument,
          "quantize_rows_q10: x must be 16-byte aligned");
  const int64_t n_blocks = rows * q10_blocks_per_row(cols);
  if (n_blocks == 0) return;
  // Enough warps to cover the device several times over; the loop takes the rest.
  const int64_t wanted = (n_blocks + kWarps * kBlocksPerWarp - 1) / (kWarps * kBlocksPerWarp);
  const auto grid = static_cast<unsigned>(wanted < 65535 * 8 ? wanted : 65535 * 8);
  quantize_rows_q10_kernel<<<grid, kThreads, 0, stream>>>(x, rows, cols, codes, scales, sums);
  STRATA_CUDA_CHECK_LAUNCH("quantize_rows_q10_kernel");
}

}  // namespace strata::cuda
