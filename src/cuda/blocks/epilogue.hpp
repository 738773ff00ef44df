// The epilogues of the grouped products, host and device: SwiGLU + requantise h per 32 features
// (the rule of quantize_block32, pipeline/arith.hpp) and the stores of h and of the f32 product
// rows. The lane-spread form of the requantisation (a block's values over several lanes of a
// warp) is in requant_lanes.cuh.
#pragma once
#include <cstdint>

#include "common/hd.hpp"
#include "cuda/blocks/product_args.hpp"
#include "cuda/blocks/work_item.hpp"
#include "pipeline/arith.hpp"

namespace strata::cuda::blocks {

// h = swiglu(gate, up) for one pair's 32-feature block, requantised by quantize_block32: the
// production arm's SwiGLU/requant, one for one.
STRATA_HD_INLINE void swiglu_requant_block32(const float* gate /*[32]*/, const float* up /*[32]*/,
                                             float* h /*[32]*/, int8_t* codes /*[32]*/,
                                             float* scale, int32_t* half_sums /*[2]*/) {
  for (int i = 0; i < 32; ++i) h[i] = swiglu(gate[i], up[i]);
  quantize_block32(h, codes, scale, half_sums);
}

// One h value of sorted-pair row r, feature c (at = r * f + c): its code, and the f32 h, gate and
// up where the launch asked for them.
STRATA_HD_INLINE void store_h_value(const ProductArgs& args, int64_t at, int code, float h,
                                    float gate, float up) {
  args.h_codes[at] = static_cast<int8_t>(code);
  if (args.h_out != nullptr) args.h_out[at] = h;
  if (args.product_out[0] != nullptr) args.product_out[0][at] = gate;
  if (args.product_out[1] != nullptr) args.product_out[1][at] = up;
}

// The scale and half sums of h block `block` (= r * f/32 + c/32).
STRATA_HD_INLINE void store_h_block(const ProductArgs& args, int64_t block, float scale,
                                    int32_t half0, int32_t half1) {
  args.h_scales[block] = scale;
  args.h_half_sums[2 * block] = half0;
  args.h_half_sums[2 * block + 1] = half1;
}

// The down-store epilogue: f32 values of one work item into out, [P, out_features] rows in
// sorted-pair order. The item covers pairs pair_begin .. + pair_count - 1 and output columns
// column_begin .. + column_count - 1; a value past either is dropped. kWidenAfterAdd picks how
// the row index reaches 64 bits (the same value, P < 2^31): a register-allocation choice only,
// made per kernel by its ptxas figures.
template <bool kWidenAfterAdd = true>
struct ProductStore {
  float* out;
  int out_features;
  int32_t pair_begin;
  int pair_count;
  int column_begin;
  int column_count;

  STRATA_HD_INLINE void operator()(int pair, int column, float value) const {
    if (pair < pair_count && column < column_count)
      out[kWidenAfterAdd
              ? static_cast<int64_t>(pair_begin + pair) * out_features + column_begin + column
              : (static_cast<int64_t>(pair_begin) + pair) * out_features + column_begin + column] =
          value;
  }
};

}  // namespace strata::cuda::blocks
