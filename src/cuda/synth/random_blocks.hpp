// Random weight blocks generated on the device (benchmarks): bytes from a counter hash, then the
// block's f16 scale field at byte 0 set to a finite positive value in [2^-9, 2^-7).
// Valid for formats whose only float field is an f16 at byte 0 (IQ3_S, Q2_0, Q8_0, Q4_0, ...).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace strata::cuda {

void launch_random_blocks(uint8_t* data, size_t n_blocks, int block_bytes, uint64_t seed, cudaStream_t stream);

}  // namespace strata::cuda
