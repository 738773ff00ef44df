// Element types at the API boundary and their exact conversions to and from f32. One definition
// for the host and the device (STRATA_HD), so a 16-bit output has the same bits on every backend.
//
// Widening (f16/bf16 -> f32) is exact. Narrowing (f32 -> f16/bf16) rounds to nearest, ties to
// even; values past the largest finite 16-bit value become +-inf, f16 keeps subnormals, and every
// NaN becomes the sign-preserving quiet NaN 0x7e00 (f16) / 0x7fc0 (bf16).
#pragma once
#include <cstdint>

#include "common/hd.hpp"

namespace strata {

// Values equal strata_moe_dtype.
enum class DType : int { kF32 = 0, kF16 = 1, kBF16 = 2, kI32 = 3, kI64 = 4 };

STRATA_HD_INLINE int dtype_bytes(DType t) {
  return t == DType::kF16 || t == DType::kBF16 ? 2 : (t == DType::kI64 ? 8 : 4);
}

STRATA_HD_INLINE uint32_t f32_bits(float v) {
  union { float f; uint32_t u; } c{v};
  return c.u;
}

STRATA_HD_INLINE float f32_from_bits(uint32_t u) {
  union { uint32_t u; float f; } c{u};
  return c.f;
}

STRATA_HD_INLINE float bf16_to_f32(uint16_t h) {
  return f32_from_bits(static_cast<uint32_t>(h) << 16);
}

STRATA_HD_INLINE uint16_t f32_to_bf16(float v) {
  const uint32_t u = f32_bits(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7fc0u);
  // NOTE: adding 0x7fff + the lowest kept bit rounds to nearest even and carries into the exponent
  // (up to inf) exactly as IEEE rounding does.
  const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

STRATA_HD_INLINE float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return f32_from_bits(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return f32_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return f32_from_bits(sign);  // +-0
  // Subnormal: normalise (value = mantissa * 2^-24).
  int shift = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  return f32_from_bits(sign | (static_cast<uint32_t>(113 - shift) << 23) | ((mantissa & 0x3ffu) << 13));
}

STRATA_HD_INLINE uint16_t f32_to_f16(float v) {
  const uint32_t u = f32_bits(v);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
  const int exponent = static_cast<int>(magnitude >> 23) - 127;
  if (exponent >= -14) {
    // Normal: keep 10 of the 23 mantissa bits, round the 13 dropped ones to nearest even.
    const uint32_t rebased = magnitude - (112u << 23);
    const uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
    return static_cast<uint16_t>(sign | (rounded >> 13));
  }
  if (exponent < -25) return sign;  // below half the smallest subnormal: +-0
  // Subnormal: value / 2^-24 with the implicit bit, rounded to nearest even.
  const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  const int drop = -exponent - 1;  // 14..24 bits below the subnormal's unit
  const uint32_t kept = mantissa >> drop;
  const uint32_t rest = mantissa & ((1u << drop) - 1u);
  const uint32_t half = 1u << (drop - 1);
  const uint32_t up = (rest > half || (rest == half && (kept & 1u))) ? 1u : 0u;
  return static_cast<uint16_t>(sign | (kept + up));
}

}  // namespace strata
