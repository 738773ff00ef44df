// Q3_K: 256 values in 110 bytes. hmask[32] (3rd bit, inverted) | qs[64] low 2 bits |
// scales[12] (16 packed 6-bit scales) | d f16. y = d*(sc - 32) * (low2 - (hbit ? 0 : 4)).
// Value 128n + 32j + 16h + l (n<2, j<4, h<2, l<16): bits 2j..2j+1 of qs[32n + 16h + l], bit
// 4n + j of hmask[16h + l], scale 8n + 2j + h. So sub-block s = 4n + j uses scales 2s, 2s+1
// and hmask bit s.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q3_K {
  static constexpr GgmlType kType = GgmlType::Q3_K;
  static constexpr const char* kName = "q3_K";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 110;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = true;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 16;
  static constexpr int kWideMax = 4;

  static constexpr int kHmaskOffset = 0, kQsOffset = 32, kScalesOffset = 96, kDOffset = 108;

  // Scale k (0..15), -32..31: low nibble from byte k%8 (high nibble for k >= 8), top two bits
  // from byte 8 + k%4 at bit 2*(k/4).
  STRATA_HD_INLINE static int scale(const uint8_t* block, int k) {
    const uint8_t* packed = block + kScalesOffset;
    const int low = (packed[k % 8] >> (4 * (k / 8))) & 0x0F;
    const int high = (packed[8 + k % 4] >> (2 * (k / 4))) & 3;
    return (low | (high << 4)) - 32;
  }

  // Codes -4..3 (the missing high bit subtracts 4); split scales d*(sc-32), exact products.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    const float d = load_fp16le(block + kDOffset);
    const int shift = 2 * (sub % 4);
    const uint8_t* qs = block + kQsOffset + 32 * (sub / 4);
    const uint8_t* hmask = block + kHmaskOffset;
    for (int h = 0; h < 2; ++h) {
      s.scale[h] = d * static_cast<float>(scale(block, 2 * sub + h));
      s.offset[h] = 0.0f;
      for (int l = 0; l < 16; ++l) {
        const int low = (qs[16 * h + l] >> shift) & 3;
        const int high_missing = ((hmask[16 * h + l] >> sub) & 1) ? 0 : 4;
        q[16 * h + l] = static_cast<int8_t>(low - high_missing);
      }
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q3_K>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q3_K>(block, out);
  }
};
static_assert(Int8BlockFormat<Q3_K>);
static_assert(WideBlockFormat<Q3_K>);
static_assert(Q3_K::kDOffset + 2 == Q3_K::kBlockBytes);
static_assert(Q3_K::kQsOffset + Q3_K::kBlockValues / 4 == Q3_K::kScalesOffset);

}  // namespace strata
