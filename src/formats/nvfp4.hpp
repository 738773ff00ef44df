// NVFP4: 64 values in 36 bytes. d[4] UE4M3 scales, one per 16 values | qs[32] E2M1 codes.
// 16-value group g uses code bytes 4 + 8g + j (j < 8): low nibble is value 16g + j, high nibble
// value 16g + 8 + j. y = kvalues_mxfp4[code] * ue4m3_half(d[g]).
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

// UE4M3 byte -> half its value (the codebook is doubled): E = bits 6..3, M = bits 2..0, bit 7
// ignored. 0x00 and 0x7F (the E4M3 NaN) give 0, as in ggml.
STRATA_HD_INLINE float ue4m3_half_to_float(uint8_t x) {
  if (x == 0x00 || x == 0x7F) return 0.0f;
  const uint32_t exponent = (x >> 3) & 0x0F;
  const uint32_t mantissa = x & 0x07;
  // Subnormal: M * 2^-9 / 2, exact.
  if (exponent == 0) return static_cast<float>(mantissa) * 0.0009765625f;
  // (1 + M/8) * 2^(E-7) / 2 = (1 + M/8) * 2^(E-8): fp32 biased exponent E + 119.
  return bits_to_float(((exponent + 119u) << 23) | (mantissa << 20));
}

struct Nvfp4 {
  static constexpr GgmlType kType = GgmlType::NVFP4;
  static constexpr const char* kName = "nvfp4";
  static constexpr int kBlockValues = 64;
  static constexpr int kBlockBytes = 36;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = true;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 16;
  static constexpr int kWideMax = 12;

  static constexpr int kQsOffset = 4;

  // Codes -12..12; one scale per 16 values (4 mantissa bits, so scale * code is exact).
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    for (int h = 0; h < 2; ++h) {
      const int group = 2 * sub + h;
      s.scale[h] = ue4m3_half_to_float(block[group]);
      s.offset[h] = 0.0f;
      const uint8_t* qs = block + kQsOffset + 8 * group;
      for (int j = 0; j < 8; ++j) {
        q[16 * h + j] = tables::kvalues_mxfp4(qs[j] & 0x0F);
        q[16 * h + 8 + j] = tables::kvalues_mxfp4(qs[j] >> 4);
      }
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Nvfp4>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Nvfp4>(block, out);
  }
};
static_assert(Int8BlockFormat<Nvfp4>);
static_assert(WideBlockFormat<Nvfp4>);
static_assert(Nvfp4::kQsOffset + Nvfp4::kBlockValues / 2 == Nvfp4::kBlockBytes);

}  // namespace strata
