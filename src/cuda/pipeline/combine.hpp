// y[t] = sum_j w[t, j] * down[pair(t, j)] with combine_step, in slot order j = 0..k-1.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace strata::cuda {

// down: [P, d] f32 in sorted-pair order; slot_to_pair: [T*k]; weights: [T, k] f32; y: [T, d] f32.
void launch_combine(const float* down, const int32_t* slot_to_pair, const float* weights, int64_t n_tokens,
                    int k, int64_t d, float* y, cudaStream_t stream);

}  // namespace strata::cuda
