// The activation quantiser of the kernels that (re)quantise 32 values per thread: the rule of
// quantize_block32 (arith.hpp), then 16-byte stores of the codes and the block's scale and sums.
#pragma once
#include <cstdint>

#include "cuda/blocks/decoder.hpp"
#include "pipeline/arith.hpp"

namespace strata::cuda::blocks {

// values: the 32 fp32 values of block `block`; codes: [n_blocks * 32] int8 (16-byte aligned),
// scales: [n_blocks] f32, half_sums: [n_blocks * 2] int32.
__device__ __forceinline__ void quantize_and_store_block32(const float* values, int64_t block,
                                                           int8_t* codes, float* scales,
                                                           int32_t* half_sums) {
  int8_t q[32];
  float scale;
  int32_t sums[2];
  quantize_block32(values, q, &scale, sums);
  uint32_t words[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) words[i] = pack_codes4(q + 4 * i);
  uint4* dst = reinterpret_cast<uint4*>(codes + block * 32);
  dst[0] = make_uint4(words[0], words[1], words[2], words[3]);
  dst[1] = make_uint4(words[4], words[5], words[6], words[7]);
  scales[block] = scale;
  half_sums[2 * block] = sums[0];
  half_sums[2 * block + 1] = sums[1];
}

}  // namespace strata::cuda::blocks
