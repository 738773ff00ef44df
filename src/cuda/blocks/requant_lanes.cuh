// SwiGLU + requant of h in registers, where one (pair, 32-feature block) is spread over the lanes
// of a warp: kLanes lanes whose ids differ in the xor masks kMaskFirst, 2 kMaskFirst, ..,
// kMaskLast, kValues values each. The operations are those of quantize_block32 (pipeline/arith.hpp)
// one for one; the partial amax and half sums are merged with xor-shuffles.
#pragma once
#include <cstdint>

#include "pipeline/arith.hpp"

namespace strata::cuda::blocks {

template <int kValues, int kMaskFirst, int kMaskLast>
struct LaneBlock32 {
  static constexpr int kLanes = 2 * kMaskLast / kMaskFirst;
  static_assert(kValues * kLanes == 32, "a block's 32 values over the lanes");
  static_assert(kValues % 2 == 0,
                "values 0 .. kValues/2 - 1 of a lane are half 0 (features 0-15), the rest half 1");

  // h[i] of this lane -> codes, the block's scale and both half sums (in every lane of the block).
  __device__ __forceinline__ static void requant(const float (&h)[kValues], int (&code)[kValues],
                                                 float& scale, int& half0, int& half1) {
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < kValues; ++i) amax = quant_amax_step(amax, h[i]);
#pragma unroll
    for (int mask = kMaskFirst; mask <= kMaskLast; mask <<= 1)
      amax = quant_amax_merge(amax, __shfl_xor_sync(0xffffffffu, amax, mask));
    scale = quant_scale(amax);
#pragma unroll
    for (int i = 0; i < kValues; ++i) code[i] = quant_code(h[i], scale);
    half0 = 0;
    half1 = 0;
#pragma unroll
    for (int i = 0; i < kValues / 2; ++i) {
      half0 += code[i];
      half1 += code[kValues / 2 + i];
    }
#pragma unroll
    for (int mask = kMaskFirst; mask <= kMaskLast; mask <<= 1) {
      half0 += __shfl_xor_sync(0xffffffffu, half0, mask);
      half1 += __shfl_xor_sync(0xffffffffu, half1, mask);
    }
  }
};

}  // namespace strata::cuda::blocks
