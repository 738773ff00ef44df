// Q4_K: 256 values in 144 bytes. d f16 | dmin f16 | scales[12] (8 x 6-bit scale + min) |
// qs[128] nibbles. Sub-block s (32 values) is the low (s even) or high (s odd) nibble of
// qs[32*(s/2) + l], l < 32. y = (d*sc) * q - dmin*m.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q4_K {
  static constexpr GgmlType kType = GgmlType::Q4_K;
  static constexpr const char* kName = "q4_K";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 144;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = true;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 945;

  static constexpr int kScalesOffset = 4, kQsOffset = 16;

  // Codes 0..15, scale d*sc, offset -(dmin*m): ggml's single rounding of d1*q - m1.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    int sc, m;
    k4_scale_min(block + kScalesOffset, sub, sc, m);
    s.scale[0] = s.scale[1] = load_fp16le(block) * static_cast<float>(sc);
    s.offset[0] = s.offset[1] = -(load_fp16le(block + 2) * static_cast<float>(m));
    const uint8_t* qs = block + kQsOffset + 32 * (sub / 2);
    const int shift = 4 * (sub % 2);
    for (int l = 0; l < 32; ++l) q[l] = static_cast<int8_t>((qs[l] >> shift) & 0x0F);
  }

  // q10: one span per sub-block, the 6-bit scale folded into w (w = q * sc, <= 15 * 63 = 945),
  // scale d, offset -(dmin*m). sc and q are non-negative, so d * w is ggml's (d * sc) * q, bit
  // for bit, and the one rounding stays in the addition of the offset.
  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w /*[32]*/,
                                    WideScale& s) {
    int sc, m;
    k4_scale_min(block + kScalesOffset, span, sc, m);
    s.scale = load_fp16le(block);
    s.offset = -(load_fp16le(block + 2) * static_cast<float>(m));
    const uint8_t* qs = block + kQsOffset + 32 * (span / 2);
    const int shift = 4 * (span % 2);
    for (int l = 0; l < 32; ++l) w[l] = static_cast<int16_t>(((qs[l] >> shift) & 0x0F) * sc);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q4_K>(block, out);
  }
};
static_assert(Int8BlockFormat<Q4_K>);
static_assert(WideBlockFormat<Q4_K>);
static_assert(Q4_K::kQsOffset + Q4_K::kBlockValues / 2 == Q4_K::kBlockBytes);

}  // namespace strata
