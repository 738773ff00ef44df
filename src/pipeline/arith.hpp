// The arithmetic every backend and arm shares, written once for host and device.
//
// NOTE: these functions define the library's numerics. The CPU arms, the CUDA arms and the
// same-quantisation oracle's requantisation all call them, and every floating-point step is an
// explicit IEEE operation (fmaf, +, *, /): host code is compiled with -ffp-contract=off and
// device code with --fmad=false, so no compiler may contract or reorder them. That is what makes
// the arms agree bit for bit across backends.
#pragma once
#include <cmath>
#include <cstdint>

#include "common/bytes.hpp"
#include "common/hd.hpp"
#include "formats/format.hpp"

namespace strata {

// ---- activation quantisation (per 32 values) ---------------------------------------------
// d = amax / 127 (fp32), q = roundf(x / d) (x/d in fp32, ties away from zero), clamped to
// [-127, 127]; an all-zero block gives d = 0, q = 0. half_sums[h] = sum of codes of half h.
// The three steps are also the pieces of the device epilogues that hold one block's values
// spread over several lanes (cuda/blocks/requant_epilogue.cuh): the same operations, one for one.
//
// The block maximum is NaN when any value of the block is NaN (h, where gate or up overflowed
// inside the layer). Its scale is then NaN, and so is every product of the block and the result,
// which the library refuses wherever it reads y (docs/numerics.md); fmaxf would drop the NaN and
// give it the finite code -127 (-511 in q10) beside the block's other values.

// Two partial amax of one block (values split over threads), or an amax and one |x|: the larger,
// or the canonical NaN (bits 0x7FFFFFFF, max.NaN.f32's) where either is NaN. The max of
// non-negative values is exact and order-free and NaN wins in any order, so any merge order gives
// the sequential amax, the same bits on every arm (the scale d = NaN / 511 keeps them).
STRATA_HD_INLINE float quant_amax_merge(float amax, float other) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(amax), "f"(other));
  return r;
#else
  if (amax != amax || other != other) return __builtin_bit_cast(float, 0x7FFFFFFFu);
  return other > amax ? other : amax;
#endif
}

STRATA_HD_INLINE float quant_amax_step(float amax, float x) {
  return quant_amax_merge(amax, fabsf(x));
}

STRATA_HD_INLINE float quant_scale(float amax) { return amax / 127.0f; }

STRATA_HD_INLINE int quant_code(float x, float d) {
  float r = (d == 0.0f) ? 0.0f : roundf(x / d);
  r = fminf(fmaxf(r, -127.0f), 127.0f);
  return static_cast<int>(r);
}

STRATA_HD_INLINE void quantize_block32(const float* x /*[32]*/, int8_t* q /*[32]*/,
                                       float* scale, int32_t* half_sums /*[2]*/) {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = quant_amax_step(amax, x[i]);
  const float d = quant_scale(amax);
  *scale = d;
  half_sums[0] = half_sums[1] = 0;
  for (int i = 0; i < 32; ++i) {
    const int code = quant_code(x[i], d);
    q[i] = static_cast<int8_t>(code);
    half_sums[i / 16] += code;
  }
}

// ---- the fold of one 32-wide k slice into an fp32 accumulator ------------------------------
// isum[h]: exact int32 dot of the weight codes and activation codes over half h (16 values);
// asum[h]: activation code sum over half h; a_scale: activation block scale.
// Formats without split scales may pass the whole 32-wide dot in isum[0] and 0 in isum[1].
// One scaled term of the fold: acc + dot * (w_scale * a_scale), one rounding for the product of
// the scales and one for the fused multiply-add.
STRATA_HD_INLINE float fold_term(float acc, float dot, float w_scale, float a_scale) {
  return fmaf(dot, w_scale * a_scale, acc);
}

template <class F>
STRATA_HD_INLINE float fold_slice(float acc, const int32_t* isum, const int32_t* asum,
                                  const SubScale& w, float a_scale) {
  if constexpr (F::kSplitScales) {
    acc = fold_term(acc, static_cast<float>(isum[0]), w.scale[0], a_scale);
    acc = fold_term(acc, static_cast<float>(isum[1]), w.scale[1], a_scale);
  } else {
    acc = fold_term(acc, static_cast<float>(isum[0] + isum[1]), w.scale[0], a_scale);
  }
  if constexpr (F::kHasOffset) {
    acc = fold_term(acc, static_cast<float>(asum[0]), w.offset[0], a_scale);
    acc = fold_term(acc, static_cast<float>(asum[1]), w.offset[1], a_scale);
  }
  return acc;
}

// ---- the exact int32 -> fp32 step of a slice dot, without a conversion instruction ---------
// A tensor core accumulates the dot onto the bits of 1.5 * 2^23, whose ulp is 1: for
// |dot| < 2^22 those bits are the float 1.5 * 2^23 + dot exactly, and subtracting 1.5 * 2^23
// leaves static_cast<float>(dot) exactly. The q8 kernels preload kDotBiasBits and unbias here.
inline constexpr int32_t kDotBiasBits = 0x4B400000;  // bits of 12582912.0f = 1.5 * 2^23
inline constexpr float kDotBias = 12582912.0f;
inline constexpr int32_t kDotBiasMaxAbs = (1 << 22) - 1;  // |dot| the trick is exact for

// A slice dot accumulated onto kDotBiasBits, back to the float of the dot.
STRATA_HD_INLINE float unbias_dot(int32_t biased_bits) {
  return bits_to_float(static_cast<uint32_t>(biased_bits)) - kDotBias;
}

// fold_slice<F> for a format with one scale per slice and no offset, from the biased dot bits:
// the same fmaf(float(dot), w_scale * a_scale, acc), bit for bit.
template <class F>
STRATA_HD_INLINE float fold_biased_dot(float acc, int32_t biased_bits, float w_scale, float a_scale) {
  static_assert(!F::kSplitScales && !F::kHasOffset, "one scale per slice and no offset");
  return fold_term(acc, unbias_dot(biased_bits), w_scale, a_scale);
}

// ---- exp, SiLU, SwiGLU --------------------------------------------------------------------
// exp on plain fp32 operations (Cody-Waite reduction, degree-6 polynomial; ~1 ulp), so host and
// device produce the same bits; the libm/CUDA expf do not agree with each other.
// The polynomial runs on x clamped into [-103.97208, 88.72283] (x itself there; finite for NaN)
// and the results outside that range are selected afterwards: the same bits as returning early,
// without a branch in device code, so that the epilogues can interleave several exps.
STRATA_HD_INLINE float exp_f32(float x) {
  const float xr = fminf(fmaxf(x, -103.97208f), 88.72283f);
  const float n = (xr * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest (1.5 * 2^23)
  float r = fmaf(n, -0.693359375f, xr);
  r = fmaf(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = fmaf(p, r, 1.3981999507e-3f);
  p = fmaf(p, r, 8.3334519073e-3f);
  p = fmaf(p, r, 4.1665795894e-2f);
  p = fmaf(p, r, 1.6666665459e-1f);
  p = fmaf(p, r, 5.0000001201e-1f);
  p = fmaf(p, r * r, r) + 1.0f;
  // Scale by 2^n in two exact steps so that n outside the normal exponent range still works.
  int ni = static_cast<int>(n);
  const int half = ni / 2;
  const float s1 = bits_to_float(static_cast<uint32_t>(half + 127) << 23);
  const float s2 = bits_to_float(static_cast<uint32_t>(ni - half + 127) << 23);
  const float y = (p * s1) * s2;
  const float high = (x != x) ? x : INFINITY;  // x >= 88.72283 or NaN
  return !(x < 88.72283f) ? high : (x < -103.97208f ? 0.0f : y);
}

STRATA_HD_INLINE float silu(float g) { return g / (1.0f + exp_f32(-g)); }

STRATA_HD_INLINE float swiglu(float g, float u) { return silu(g) * u; }

// ---- combine -------------------------------------------------------------------------------
// One output element: y = sum_j w[j] * down[j] in slot order j = 0..k-1, one rounding per step.
STRATA_HD_INLINE float combine_step(float acc, float weight, float down_value) {
  return fmaf(weight, down_value, acc);
}

}  // namespace strata
