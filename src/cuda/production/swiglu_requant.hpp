// h = swiglu(gate, up) per sorted pair row, requantised per 32 features by quantize_block32.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace strata::cuda::production {

// gate, up: [P, f] f32. codes: [P, f] int8; scales: [P, f/32] f32; half_sums: [P, f/16] int32.
// h (optional, may be null): [P, f] f32 before requantisation, for the parity tests.
void launch_swiglu_requant(const float* gate, const float* up, int64_t n_pairs, int64_t f, int8_t* codes,
                           float* scales, int32_t* half_sums, float* h, cudaStream_t stream);

}  // namespace strata::cuda::production
