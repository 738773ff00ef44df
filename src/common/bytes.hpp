// Little-endian field loads and half-precision conversions, usable on host and device.
// NOTE: GGUF tensor data is only 2-byte aligned inside a row of blocks, so every multi-byte
// load here is composed from byte or 16-bit loads, never a wider aligned access.
#pragma once
#include <cstdint>
#include <cstring>

#include "common/hd.hpp"

namespace strata {

STRATA_HD_INLINE uint16_t load_u16le(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (static_cast<uint16_t>(p[1]) << 8));
}

STRATA_HD_INLINE uint32_t load_u32le(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

STRATA_HD_INLINE float bits_to_float(uint32_t bits) {
#if STRATA_DEVICE_PASS
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

STRATA_HD_INLINE uint32_t float_to_bits(float f) {
#if STRATA_DEVICE_PASS
  return __float_as_uint(f);
#else
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
#endif
}

// IEEE binary16 -> binary32, exact for every input (subnormals, infinities, NaN payloads).
// The argument is the 16 raw bits: converting the integer's *value* instead is a classic bug.
STRATA_HD_INLINE float fp16_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) return bits_to_float(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0) return bits_to_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return bits_to_float(sign);
  // Subnormal: value = mantissa * 2^-24, exact in fp32.
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-08f;
  return (sign != 0u) ? -magnitude : magnitude;
}

STRATA_HD_INLINE float load_fp16le(const uint8_t* p) { return fp16_bits_to_float(load_u16le(p)); }

STRATA_HD_INLINE float bf16_bits_to_float(uint16_t b) {
  return bits_to_float(static_cast<uint32_t>(b) << 16);
}

}  // namespace strata
