// Q2_K: 256 values in 84 bytes. scales[16] (per 16 values: low nibble scale, high nibble min) |
// qs[64] 2-bit codes | d f16 | dmin f16. y = (d*sc) * q - dmin*m.
// Codes: value 128n + 32j + 16h + l (n<2, j<4, h<2, l<16) is bits 2j..2j+1 of qs[32n + 16h + l]
// and uses scale byte 8n + 2j + h; so 32-value sub-block s = 4n + j uses scale bytes 2s, 2s+1.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q2_K {
  static constexpr GgmlType kType = GgmlType::Q2_K;
  static constexpr const char* kName = "q2_K";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 84;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = true;
  static constexpr bool kHasOffset = true;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 16;
  static constexpr int kWideMax = 3;

  static constexpr int kScalesOffset = 0, kQsOffset = 16, kDOffset = 80, kDminOffset = 82;

  // Codes 0..3; per half: scale d*sc, offset -(dmin*m). Both products are exact, so
  // scale*q + offset rounds once, like ggml's dl*q - ml.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    const float d = load_fp16le(block + kDOffset);
    const float dmin = load_fp16le(block + kDminOffset);
    const int shift = 2 * (sub % 4);
    const uint8_t* qs = block + kQsOffset + 32 * (sub / 4);
    for (int h = 0; h < 2; ++h) {
      const uint8_t packed = block[kScalesOffset + 2 * sub + h];
      s.scale[h] = d * static_cast<float>(packed & 0x0F);
      s.offset[h] = -(dmin * static_cast<float>(packed >> 4));
      for (int l = 0; l < 16; ++l)
        q[16 * h + l] = static_cast<int8_t>((qs[16 * h + l] >> shift) & 3);
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q2_K>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q2_K>(block, out);
  }
};
static_assert(Int8BlockFormat<Q2_K>);
static_assert(WideBlockFormat<Q2_K>);
static_assert(Q2_K::kDminOffset + 2 == Q2_K::kBlockBytes);
static_assert(Q2_K::kQsOffset + Q2_K::kBlockValues / 4 == Q2_K::kDOffset);

}  // namespace strata
