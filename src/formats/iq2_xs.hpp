// IQ2_XS: 256 values in 74 bytes. d f16 | qs u16[32]: bits 0..8 index iq2xs_grid (8 magnitudes),
// bits 9..15 a 7-bit sign field (ksigns_iq2xs) | scales[8]: per sub-block, low nibble for
// groups 0-1 (values 0..15), high nibble for groups 2-3. y = d*(0.5 + nibble)*0.25 * m * sign.
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

struct Iq2Xs {
  static constexpr GgmlType kType = GgmlType::IQ2_XS;
  static constexpr const char* kName = "iq2_xs";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 74;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = true;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 16;
  static constexpr int kWideMax = 43;

  static constexpr int kQsOffset = 2, kScalesOffset = 66;

  // Codes +-{8, 25, 43}; one scale per 16 values (two groups of 8).
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    const float d = load_fp16le(block);
    const uint8_t scales = block[kScalesOffset + sub];
    for (int h = 0; h < 2; ++h) {
      s.scale[h] = d * (0.5f + static_cast<float>((scales >> (4 * h)) & 0x0F)) * 0.25f;
      s.offset[h] = 0.0f;
    }
    for (int l = 0; l < 4; ++l) {
      const uint16_t packed = load_u16le(block + kQsOffset + 2 * (4 * sub + l));
      const uint64_t magnitudes = tables::iq2xs_grid(packed & 511);
      const uint8_t negative = tables::ksigns_iq2xs(packed >> 9);
      for (int j = 0; j < 8; ++j) {
        const int magnitude = static_cast<int>((magnitudes >> (8 * j)) & 0xFF);
        q[8 * l + j] = static_cast<int8_t>(((negative >> j) & 1) ? -magnitude : magnitude);
      }
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Iq2Xs>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Iq2Xs>(block, out);
  }
};
static_assert(Int8BlockFormat<Iq2Xs>);
static_assert(WideBlockFormat<Iq2Xs>);
static_assert(Iq2Xs::kScalesOffset + Iq2Xs::kBlockValues / 32 == Iq2Xs::kBlockBytes);

}  // namespace strata
