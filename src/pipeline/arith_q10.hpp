// The q10 profile's arithmetic, written once for host and device (docs/numerics.md, "q10").
//
// NOTE: as in arith.hpp, these functions define the profile's bits. Every backend and arm of q10
// calls them; host code is compiled with -ffp-contract=off and device code with --fmad=false.
//
//   activations  per 64 values of a row: d = amax / 511, q = roundf(x / d) clamped to +-511,
//                codes exact in fp16 (and int16); code sums per 16 values for offset formats
//   weights      the format's wide decode: integer w (|w| <= W_f) per span of S in {16, 32, 64}
//                values, one fp32 scale (and offset) per (row, span)
//   products     per (pair, output row): acc = 0.0f, then per span in k order
//                acc = fmaf(isum, w_scale * a_scale, acc)        isum: exact integer span dot
//                acc = fmaf(asum, w_offset * a_scale, acc)       offset formats only
#pragma once
#include <cmath>
#include <cstdint>

#include "common/hd.hpp"
#include "formats/format.hpp"
#include "pipeline/arith.hpp"

namespace strata {

// Values per activation block; a row whose length is not a multiple of 64 ends in one block of
// 32 (rows are whole 32-value sub-blocks of every format).
inline constexpr int kQ10BlockValues = 64;
// Values per activation code sum (the smallest span).
inline constexpr int kQ10SumValues = 16;

// Activation blocks of a row of `cols` values (cols a multiple of 32).
STRATA_HD_INLINE int64_t q10_blocks_per_row(int64_t cols) {
  return (cols + kQ10BlockValues - 1) / kQ10BlockValues;
}

// Values in block `block` of a row of `cols` values: 64, or 32 for a short last block.
STRATA_HD_INLINE int q10_block_values(int64_t cols, int64_t block) {
  const int64_t rest = cols - block * kQ10BlockValues;
  return rest < kQ10BlockValues ? static_cast<int>(rest) : kQ10BlockValues;
}

// The rule's code from its quotient x / d: roundf (ties away from zero), clamped to +-511.
STRATA_HD_INLINE int q10_code(float quotient) {
  const float r = roundf(quotient);
  return static_cast<int>(
      fminf(fmaxf(r, -static_cast<float>(kQ10MaxCode)), static_cast<float>(kQ10MaxCode)));
}

// ---- activation quantisation (per block of 64 values, or 32 at a row's end) ------------------
// d = amax / 511 (fp32), q = roundf(x / d) (x/d in fp32, ties away from zero), clamped to
// [-511, 511]; an all-zero block gives d = 0, q = 0, a block holding a NaN d = NaN (the max is
// quant_amax_step's). sums[i] = sum of codes i*16 .. i*16+15.
STRATA_HD_INLINE void quantize_block_q10(const float* x /*[n]*/, int n /*64 or 32*/,
                                         int16_t* q /*[n]*/, float* scale,
                                         int32_t* sums /*[n / 16]*/) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) amax = quant_amax_step(amax, x[i]);
  const float d = amax / static_cast<float>(kQ10MaxCode);
  *scale = d;
  for (int i = 0; i < n / kQ10SumValues; ++i) sums[i] = 0;
  for (int i = 0; i < n; ++i) {
    const int code = q10_code((d == 0.0f) ? 0.0f : x[i] / d);
    q[i] = static_cast<int16_t>(code);
    sums[i / kQ10SumValues] += code;
  }
}

// ---- the same codes from the block scale's reciprocal (the device epilogues) -----------------
// quantize_block_q10 divides every value of a block by its d. Where d lies in
// [kQ10ReciprocalMin, kQ10ReciprocalMax], the quotient can instead come from r = 1.0f / d, one
// IEEE division per block: q0 = x * r, then q0 + (x - q0 d) r, the remainder and the correction
// each by one fmaf (q10_quotient).
// - With r the correctly rounded 1/d and q0 within an ulp of x / d, that is x / d correctly
//   rounded wherever the remainder x - q0 d is exact (Markstein's theorem): for |x| >= 2^-102,
//   whose remainder needs no bits below 2^-149.
// - Below that, |x / d| < 2^-102 / 2^-100 = 1/4, and so is the returned quotient. Both round
//   to a zero code (its sign is lost in the int).
// - A NaN x gives NaN, as x / d does. An infinite x makes d infinite (d = amax / 511), outside
//   the range, as are d = 0, subnormal and NaN d: those blocks keep the division.
// tests/unit/cpu_q10_test.cpp holds q10_quotient and q10_code against the rule, and the device
// arms' bitwise tests hold the kernels against the CPU arms.
inline constexpr float kQ10ReciprocalMin = 0x1p-100f;
inline constexpr float kQ10ReciprocalMax = 0x1p100f;

STRATA_HD_INLINE bool q10_reciprocal_applies(float d) {
  return d >= kQ10ReciprocalMin && d <= kQ10ReciprocalMax;  // false for NaN
}

// x / d from r = 1.0f / d, for d where q10_reciprocal_applies (see above).
STRATA_HD_INLINE float q10_quotient(float x, float d, float r) {
  const float q0 = x * r;
  return fmaf(fmaf(-q0, d, x), r, q0);
}

// ---- the fold of one span into an fp32 accumulator ---------------------------------------------
// isum: the exact integer dot of the span's weights and activation codes, as fp32 (|isum| < 2^24
// by WideBlockFormat, so the conversion is exact whether it comes from int32 on the CPU or from
// an fp16 tensor core's fp32 accumulator); asum: the span's activation code sum; a_scale: the
// scale of the activation block that holds the span.
template <class F>
STRATA_HD_INLINE float fold_span(float acc, float isum, float asum, const WideScale& w,
                                 float a_scale) {
  acc = fmaf(isum, w.scale * a_scale, acc);
  if constexpr (F::kHasOffset) acc = fmaf(asum, w.offset * a_scale, acc);
  return acc;
}

}  // namespace strata
