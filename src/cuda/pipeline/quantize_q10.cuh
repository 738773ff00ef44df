// Device helper of the q10 activation rule (quantize_block_q10, pipeline/arith_q10.hpp) spread over
// a half-warp: lane s (0..15) of the half holds values 4s .. 4s + 3 of a 64-value block (lanes 0-7
// of a 32-value block at a row's end). The amax is a max-reduction over xor-shuffles within the
// half -- quant_amax_merge gives the sequential max in any order, and every lane starts from 0.0f
// as the serial rule does -- and each code is the rule's own quotient (x / d, or the same bits from
// the scale's reciprocal where q10_reciprocal_applies: q10_quotient), so codes, scale and sums are
// the host rule's bits.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "pipeline/arith_q10.hpp"

namespace strata::cuda {

struct Q10HalfWarpBlock {
  int code[4];  // codes of this lane's four values (0 on idle lanes)
  float scale;  // the block's scale d (every lane of the half)
  int sum16;    // on lanes 4j of the half: the code sum of values 16j .. 16j + 15
};

// v: this lane's four values; n: 64, or 32 (then lanes 8-15 of the half pass anything and are
// ignored), or 0 for a half with no block (its results are not used). sub: the lane within its
// half (0..15). All 32 lanes of the warp must call it; each half reduces over its own lanes.
__device__ __forceinline__ Q10HalfWarpBlock quantize_block_q10_half(float4 v, int n, int sub) {
  const bool active = 4 * sub < n;
  const float values[4] = {v.x, v.y, v.z, v.w};
  float amax = 0.0f;
  if (active) {
#pragma unroll
    for (int i = 0; i < 4; ++i) amax = quant_amax_step(amax, values[i]);
  }
#pragma unroll
  for (int mask = 8; mask >= 1; mask >>= 1)
    amax = quant_amax_merge(amax, __shfl_xor_sync(0xffffffffu, amax, mask));
  Q10HalfWarpBlock out;
  // NOTE: the operations of quantize_block_q10, one for one (x / d in fp32, q10_code); the
  // reciprocal's quotient has the division's bits where it applies (arith_q10.hpp).
  const float d = amax / static_cast<float>(kQ10MaxCode);
  out.scale = d;
  const bool reciprocal = q10_reciprocal_applies(d);
  const float r = reciprocal ? 1.0f / d : 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float quotient = d == 0.0f ? 0.0f : reciprocal ? q10_quotient(values[i], d, r) : values[i] / d;
    out.code[i] = active ? q10_code(quotient) : 0;
  }
  int sum = out.code[0] + out.code[1] + out.code[2] + out.code[3];
#pragma unroll
  for (int mask = 1; mask < 4; mask <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, mask);
  out.sum16 = sum;
  return out;
}

// The four codes as f16 (exact: |code| <= 511), lower k in the lower address.
__device__ __forceinline__ uint2 q10_codes_f16x4(const Q10HalfWarpBlock& b) {
  const __half2 lo = __halves2half2(__int2half_rn(b.code[0]), __int2half_rn(b.code[1]));
  const __half2 hi = __halves2half2(__int2half_rn(b.code[2]), __int2half_rn(b.code[3]));
  return make_uint2(*reinterpret_cast<const uint32_t*>(&lo), *reinterpret_cast<const uint32_t*>(&hi));
}

}  // namespace strata::cuda
