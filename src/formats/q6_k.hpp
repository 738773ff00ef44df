// Q6_K: 256 values in 210 bytes. ql[128] low nibbles | qh[64] high 2 bits | scales[16] int8 |
// d f16. y = (d*sc) * (code - 32).
// Value 128n + 32k + l (n<2, k<4, l<32): nibble 4*(k/2) of ql[64n + 32*(k%2) + l], bits 2k..2k+1
// of qh[32n + l], scale 8n + 2k + l/16. So sub-block s = 4n + k uses scales 2s, 2s+1.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q6_K {
  static constexpr GgmlType kType = GgmlType::Q6_K;
  static constexpr const char* kName = "q6_K";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 210;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = true;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 16;
  static constexpr int kWideMax = 32;

  static constexpr int kQlOffset = 0, kQhOffset = 128, kScalesOffset = 192, kDOffset = 208;

  // Codes -32..31; |d*sc*q| needs at most 11 + 7 + 5 bits of significand, so it is exact.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    const float d = load_fp16le(block + kDOffset);
    const int n = sub / 4, k = sub % 4;
    for (int h = 0; h < 2; ++h) {
      s.scale[h] = d * static_cast<float>(static_cast<int8_t>(block[kScalesOffset + 2 * sub + h]));
      s.offset[h] = 0.0f;
    }
    const uint8_t* ql = block + kQlOffset + 64 * n + 32 * (k % 2);
    const uint8_t* qh = block + kQhOffset + 32 * n;
    for (int l = 0; l < 32; ++l) {
      const int low = (ql[l] >> (4 * (k / 2))) & 0x0F;
      const int high = (qh[l] >> (2 * k)) & 3;
      q[l] = static_cast<int8_t>((low | (high << 4)) - 32);
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q6_K>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q6_K>(block, out);
  }
};
static_assert(Int8BlockFormat<Q6_K>);
static_assert(WideBlockFormat<Q6_K>);
static_assert(Q6_K::kDOffset + 2 == Q6_K::kBlockBytes);

}  // namespace strata
