// IQ1_M: 256 values in 56 bytes. qs[32] low 8 index bits | qh[16] (two per sub-block) |
// scales u16[4]. No d field: the f16 d is assembled from the top nibble of each scale word (word
// k gives bits 4k..4k+3). qh[2b + p] covers groups 2p, 2p+1 of sub-block b: bits 0-2 / 4-6 are
// index bits 8-10, bit 3 / 7 the delta sign. Scale word b/2 at bit 6*(b%2): 3-bit scale of
// groups 0-1, then of groups 2-3. y = d*(2s+1) * (g + delta), delta = +-1/8.
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

struct Iq1M {
  static constexpr GgmlType kType = GgmlType::IQ1_M;
  static constexpr const char* kName = "iq1_m";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 56;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = true;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 64;
  static constexpr int kWideMax = 135;

  static constexpr int kQsOffset = 0, kQhOffset = 32, kScalesOffset = 48;

  STRATA_HD_INLINE static uint16_t scale_word(const uint8_t* block, int k) {
    return load_u16le(block + kScalesOffset + 2 * k);
  }

  // The super-block d, as raw f16 bits spread over the four scale words.
  STRATA_HD_INLINE static float super_scale(const uint8_t* block) {
    const uint16_t bits = static_cast<uint16_t>(
        (scale_word(block, 0) >> 12) | ((scale_word(block, 1) >> 8) & 0x00F0) |
        ((scale_word(block, 2) >> 4) & 0x0F00) | (scale_word(block, 3) & 0xF000));
    return fp16_bits_to_float(bits);
  }

  // Codes 8g +- 1 (-9..9) with scale d*(2s+1)/8 per 16 values, as in IQ1_S.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    const float d = super_scale(block);
    const uint16_t word = scale_word(block, sub / 2);
    for (int h = 0; h < 2; ++h) {
      const int sub_scale = (word >> (6 * (sub % 2) + 3 * h)) & 7;
      s.scale[h] = d * static_cast<float>(2 * sub_scale + 1) * 0.125f;
      s.offset[h] = 0.0f;
    }
    for (int l = 0; l < 4; ++l) {
      const uint8_t qh = block[kQhOffset + 2 * sub + l / 2];
      const int field = (qh >> (4 * (l % 2))) & 0x0F;  // 3 index bits + delta sign
      const int index = block[kQsOffset + 4 * sub + l] | ((field & 7) << 8);
      const int delta = (field & 8) ? -1 : 1;
      const uint64_t grid = tables::iq1s_grid(index);
      for (int j = 0; j < 8; ++j) {
        const int g = static_cast<int8_t>((grid >> (8 * j)) & 0xFF);
        q[8 * l + j] = static_cast<int8_t>(8 * g + delta);
      }
    }
  }

  // q10: one 64-value span per pair of sub-blocks, each 16-value half's odd sub-scale folded
  // into w (w = (8g +- 1) * (2s_h + 1), |w| <= 135), scale d/8: exact products, as in IQ1_S.
  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w /*[64]*/,
                                    WideScale& s) {
    fold_wide_multipliers<Iq1M>(block, span, w);
    s.scale = super_scale(block) * 0.125f;
    s.offset = 0.0f;
  }
  // The odd sub-scale 2s_h + 1 of the 16-value half holding value `value` of sub-block `sub`.
  STRATA_HD_INLINE static int wide_multiplier(const uint8_t* block, int sub, int value) {
    return 2 * ((scale_word(block, sub / 2) >> (6 * (sub % 2) + 3 * (value / 16))) & 7) + 1;
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Iq1M>(block, out);
  }
};
static_assert(Int8BlockFormat<Iq1M>);
static_assert(WideBlockFormat<Iq1M>);
static_assert(Iq1M::kScalesOffset + 8 == Iq1M::kBlockBytes);

}  // namespace strata
