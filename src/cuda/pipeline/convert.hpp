// Element conversions at the API boundary on the device (common/dtype.hpp's definitions, the
// same bits as the host's): f16/bf16 -> f32, f32 -> f16/bf16, i64 -> i32 (-1 outside [0, 2^31)).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "common/dtype.hpp"

namespace strata::cuda {

// src: [count] of `from`, dst: [count] of `to`, both device memory; enqueued on `stream`.
void launch_convert(const void* src, DType from, void* dst, DType to, size_t count, cudaStream_t stream);

}  // namespace strata::cuda
