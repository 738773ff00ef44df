// Device-side decode of whole tensors of blocks, for checks and tools (dequant on the GPU, the
// decode vectors test). Not on the hot path: the GEMM kernels decode straight into their tiles.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "formats/ggml_type.hpp"

namespace strata::cuda {

// to_float of n_blocks consecutive blocks of `type`. d_blocks needs only 2-byte alignment
// (GGUF tensor data). Throws Error(kUnsupported) for a type that is not a block format.
void decode_blocks_cuda(GgmlType type,
                        const void* d_blocks,  // [n_blocks, block_bytes] raw blocks
                        int64_t n_blocks,
                        float* d_out,  // [n_blocks, block_values] fp32
                        cudaStream_t stream);

// The int8 decomposition of every 32-value sub-block (n_sub = n_blocks * block_values / 32):
// value i of sub-block k = d_scales[k][i/16] * d_codes[k][i] + d_offsets[k][i/16].
// Throws Error(kUnsupported) for a format without an int8 decomposition.
void decode_subblocks_cuda(
    GgmlType type,
    const void* d_blocks,  // [n_blocks, block_bytes] raw blocks
    int64_t n_blocks,
    int8_t* d_codes,   // [n_sub, 32] int8
    float* d_scales,   // [n_sub, 2] fp32, per 16-value half
    float* d_offsets,  // [n_sub, 2] fp32, per 16-value half (0 without offset)
    cudaStream_t stream);

}  // namespace strata::cuda
