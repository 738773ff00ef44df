// IQ2_XXS: 256 values in 66 bytes. d f16 | 8 chunks of 8 bytes, one per 32-value sub-block:
// bytes 0..3 index iq2xxs_grid (8 magnitudes each, from {8, 25, 43}); bytes 4..7 a u32 w with
// four 7-bit sign fields (ksigns_iq2xs parity rule) and the sub-scale in w >> 28.
// y = d * (0.5 + (w >> 28)) * 0.25 * magnitude * sign.
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

struct Iq2Xxs {
  static constexpr GgmlType kType = GgmlType::IQ2_XXS;
  static constexpr const char* kName = "iq2_xxs";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 66;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 43;

  // Codes +-{8, 25, 43}; scale d*(2s+1)/8 is exact (16 significant bits), and so is scale*q.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    const uint8_t* chunk = block + 2 + 8 * sub;
    const uint32_t w = load_u32le(chunk + 4);
    set_uniform_scale(s, load_fp16le(block) * (0.5f + static_cast<float>(w >> 28)) * 0.25f);
    for (int l = 0; l < 4; ++l) {
      const uint64_t magnitudes = tables::iq2xxs_grid(chunk[l]);
      const uint8_t negative = tables::ksigns_iq2xs(static_cast<int>((w >> (7 * l)) & 127));
      for (int j = 0; j < 8; ++j) {
        const int magnitude = static_cast<int>((magnitudes >> (8 * j)) & 0xFF);
        q[8 * l + j] = static_cast<int8_t>(((negative >> j) & 1) ? -magnitude : magnitude);
      }
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Iq2Xxs>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Iq2Xxs>(block, out);
  }
};
static_assert(Int8BlockFormat<Iq2Xxs>);
static_assert(WideBlockFormat<Iq2Xxs>);
static_assert(2 + 8 * (Iq2Xxs::kBlockValues / 32) == Iq2Xxs::kBlockBytes);

}  // namespace strata
