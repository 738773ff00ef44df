// Device helper of the q10 activation rule (quantize_block_q10, pipeline/arith_q10.hpp) spread over
// one warp: lane l holds values 2l and 2l + 1 of a 64-value block (lanes 0-15 of a 32-value block
// at a row's end). The amax is a max-reduction over xor-shuffles -- the max of a set is the same
// value in any order, and every lane starts from 0.0f as the serial rule does, so a NaN is ignored
// the same way -- and each code is the rule's own per-value operations, so codes, scale and sums
// are the host rule's bits.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "pipeline/arith_q10.hpp"

namespace strata::cuda {

struct Q10WarpBlock {
  int code[2];  // codes of this lane's two values (0 on idle lanes)
  float scale;  // the block's scale d (every lane)
  int sum16;    // on lanes 8j: the code sum of values 16j .. 16j + 15
};

// v0, v1: this lane's two values; n: 64, or 32 (then lanes 16-31 pass anything and are ignored).
// All 32 lanes must call it.
__device__ __forceinline__ Q10WarpBlock quantize_block_q10_warp(float v0, float v1, int n,
                                                                int lane) {
  const bool active = 2 * lane < n;
  float amax = 0.0f;
  if (active) amax = quant_amax_step(quant_amax_step(amax, v0), v1);
#pragma unroll
  for (int mask = 16; mask >= 1; mask >>= 1)
    amax = quant_amax_merge(amax, __shfl_xor_sync(0xffffffffu, amax, mask));
  Q10WarpBlock out;
  // NOTE: the operations of quantize_block_q10, one for one (x / d in fp32, q10_code).
  const float d = amax / static_cast<float>(kQ10MaxCode);
  out.scale = d;
  const float values[2] = {v0, v1};
#pragma unroll
  for (int i = 0; i < 2; ++i) out.code[i] = active ? q10_code((d == 0.0f) ? 0.0f : values[i] / d) : 0;
  int sum = out.code[0] + out.code[1];
#pragma unroll
  for (int mask = 1; mask < 8; mask <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, mask);
  out.sum16 = sum;
  return out;
}

// The two codes as f16 (exact: |code| <= 511), lower k in the low half.
__device__ __forceinline__ __half2 q10_codes_f16x2(const Q10WarpBlock& b) {
  return __halves2half2(__int2half_rn(b.code[0]), __int2half_rn(b.code[1]));
}

}  // namespace strata::cuda
