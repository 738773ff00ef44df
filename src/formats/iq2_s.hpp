// IQ2_S: 256 values in 82 bytes. d f16 | qs[32] low 8 index bits | signs[32] (8 bits per group,
// no parity) | qh[8] (bits 2l, 2l+1 of qh[b] are index bits 8, 9 of group l) | scales[8] as in
// IQ2_XS. Indices go into the 1024-entry iq2s_grid (8 magnitudes each).
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

struct Iq2S {
  static constexpr GgmlType kType = GgmlType::IQ2_S;
  static constexpr const char* kName = "iq2_s";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 82;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = true;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 16;
  static constexpr int kWideMax = 43;

  static constexpr int kQsOffset = 2, kSignsOffset = 34, kQhOffset = 66, kScalesOffset = 74;

  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    const float d = load_fp16le(block);
    const uint8_t scales = block[kScalesOffset + sub];
    for (int h = 0; h < 2; ++h) {
      s.scale[h] = d * (0.5f + static_cast<float>((scales >> (4 * h)) & 0x0F)) * 0.25f;
      s.offset[h] = 0.0f;
    }
    const uint8_t qh = block[kQhOffset + sub];
    for (int l = 0; l < 4; ++l) {
      const int index = block[kQsOffset + 4 * sub + l] | (((qh >> (2 * l)) & 3) << 8);
      const uint64_t magnitudes = tables::iq2s_grid(index);
      const uint8_t negative = block[kSignsOffset + 4 * sub + l];
      for (int j = 0; j < 8; ++j) {
        const int magnitude = static_cast<int>((magnitudes >> (8 * j)) & 0xFF);
        q[8 * l + j] = static_cast<int8_t>(((negative >> j) & 1) ? -magnitude : magnitude);
      }
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Iq2S>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Iq2S>(block, out);
  }
};
static_assert(Int8BlockFormat<Iq2S>);
static_assert(WideBlockFormat<Iq2S>);
static_assert(Iq2S::kScalesOffset + Iq2S::kBlockValues / 32 == Iq2S::kBlockBytes);

}  // namespace strata
