// q10 activation quantisation on the device: the rule of quantize_block_q10
// (pipeline/arith_q10.hpp) per 64 values of each row (a 32-value block at a row's end when cols %
// 64 == 32), so codes, scales and code sums equal the host rule bit for bit.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace strata::cuda {

// x: [rows, cols] f32, 16-byte aligned (cols a multiple of 32; both checked, before any CUDA call). codes: [rows, cols] f16 (exact
// integers, |q| <= 511); scales: [rows, q10_blocks_per_row(cols)] f32; sums: [rows, cols/16] int32
// (code sum per 16 values). Device pointers.
void launch_quantize_rows_q10(const float* x, int64_t rows, int64_t cols, __half* codes,
                              float* scales, int32_t* sums, cudaStream_t stream);

}  // namespace strata::cuda
