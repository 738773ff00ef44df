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
STRATA_HD_INLINE void quantize_block32(const float* x /*[32]*/, int8_t* q /*[32]*/,
                                       float* scale, int32_t* half_sums /*[2]*/) {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = fmaxf(amax, fabsf(x[i]));
  const float d = amax / 127.0f;
  *scale = d;
  half_sums[0] = half_sums[1] = 0;
  for (int i = 0; i < 32; ++i) {
    float r = (d == 0.0f) ? 0.0f : roundf(x[i] / d);
    r = fminf(fmaxf(r, -127.0f), 127.0f);
    const int code = static_cast<int>(r);
    q[i] = static_cast<int8_t>(code);
    half_sums[i / 16] += code;
  }
}

// ---- the fold of one 32-wide k slice into an fp32 accumulator ------------------------------
// isum[h]: exact int32 dot of the weight codes and activation codes over half h (16 values);
// asum[h]: activation code sum over half h; a_scale: activation block scale.
// Formats without split scales may pass the whole 32-wide dot in isum[0] and 0 in isum[1].
template <class F>
STRATA_HD_INLINE float fold_slice(float acc, const int32_t* isum, const int32_t* asum,
                                  const SubScale& w, float a_scale) {
  if constexpr (F::kSplitScales) {
    acc = fmaf(static_cast<float>(isum[0]), w.scale[0] * a_scale, acc);
    acc = fmaf(static_cast<float>(isum[1]), w.scale[1] * a_scale, acc);
  } else {
    acc = fmaf(static_cast<float>(isum[0] + isum[1]), w.scale[0] * a_scale, acc);
  }
  if constexpr (F::kHasOffset) {
    acc = fmaf(static_cast<float>(asum[0]), w.offset[0] * a_scale, acc);
    acc = fmaf(static_cast<float>(asum[1]), w.offset[1] * a_scale, acc);
  }
  return acc;
}

// ---- exp, SiLU, SwiGLU --------------------------------------------------------------------
// exp on plain fp32 operations (Cody-Waite reduction, degree-6 polynomial; ~1 ulp), so host and
// device produce the same bits; the libm/CUDA expf do not agree with each other.
STRATA_HD_INLINE float exp_f32(float x) {
  if (!(x < 88.72283f)) return (x != x) ? x : INFINITY;
  if (x < -103.97208f) return 0.0f;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  float r = fmaf(n, -0.693359375f, x);
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
  return (p * s1) * s2;
}

STRATA_HD_INLINE float silu(float g) { return g / (1.0f + exp_f32(-g)); }

STRATA_HD_INLINE float swiglu(float g, float u) { return silu(g) * u; }

// ---- combine -------------------------------------------------------------------------------
// One output element: y = sum_j w[j] * down[j] in slot order j = 0..k-1, one rounding per step.
STRATA_HD_INLINE float combine_step(float acc, float weight, float down_value) {
  return fmaf(weight, down_value, acc);
}

}  // namespace strata
