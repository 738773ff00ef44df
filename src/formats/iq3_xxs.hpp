// IQ3_XXS: 256 values in 98 bytes. d f16 | qs[64] indices into iq3xxs_grid (4 magnitudes each) |
// 8 u32 words, one per sub-block: four 7-bit sign fields (ksigns_iq2xs) and the sub-scale in
// w >> 28. Group l (8 values) of sub-block b uses qs[8b + 2l] for values 0-3, qs[8b + 2l + 1]
// for values 4-7. y = d * (0.5 + (w >> 28)) * 0.5 * magnitude * sign.
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

struct Iq3Xxs {
  static constexpr GgmlType kType = GgmlType::IQ3_XXS;
  static constexpr const char* kName = "iq3_xxs";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 98;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 62;

  static constexpr int kQsOffset = 2, kSignsOffset = 66;

  // Codes +-(4..62), even magnitudes; scale d*(2s+1)/4, exact.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    const uint32_t w = load_u32le(block + kSignsOffset + 4 * sub);
    set_uniform_scale(s, load_fp16le(block) * (0.5f + static_cast<float>(w >> 28)) * 0.5f);
    const uint8_t* qs = block + kQsOffset + 8 * sub;
    for (int l = 0; l < 4; ++l) {
      const uint8_t negative = tables::ksigns_iq2xs(static_cast<int>((w >> (7 * l)) & 127));
      for (int half = 0; half < 2; ++half) {
        const uint32_t magnitudes = tables::iq3xxs_grid(qs[2 * l + half]);
        for (int j = 0; j < 4; ++j) {
          const int k = 4 * half + j;  // value within the group of 8
          const int magnitude = static_cast<int>((magnitudes >> (8 * j)) & 0xFF);
          q[8 * l + k] = static_cast<int8_t>(((negative >> k) & 1) ? -magnitude : magnitude);
        }
      }
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Iq3Xxs>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Iq3Xxs>(block, out);
  }
};
static_assert(Int8BlockFormat<Iq3Xxs>);
static_assert(WideBlockFormat<Iq3Xxs>);
static_assert(Iq3Xxs::kSignsOffset + 4 * (Iq3Xxs::kBlockValues / 32) == Iq3Xxs::kBlockBytes);

}  // namespace strata
