// Activation quantisation on the device: the rule of quantize_block32 (pipeline/arith.hpp), so
// codes, scales and half sums equal the CPU's quantize_rows bit for bit.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace strata::cuda {

// x: [rows, cols] f32 (cols a multiple of 32). codes: [rows, cols] int8; scales: [rows, cols/32]
// f32; half_sums: [rows, cols/16] int32.
void launch_quantize_rows(const float* x, int64_t rows, int64_t cols, int8_t* codes, float* scales,
                          int32_t* half_sums, cudaStream_t stream);

}  // namespace strata::cuda
