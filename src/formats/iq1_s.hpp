// IQ1_S: 256 values in 50 bytes. d f16 | qs[32] low 8 index bits | qh u16[8], one per sub-block:
// bits 3l..3l+2 are index bits 8-10 of group l, bits 12-14 the sub-scale s, bit 15 the sign of
// delta. iq1s_grid entries are 8 int8 values in {-1, 0, 1}.
// y = d*(2s+1) * (g + delta), delta = +-1/8.
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

struct Iq1S {
  static constexpr GgmlType kType = GgmlType::IQ1_S;
  static constexpr const char* kName = "iq1_s";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 50;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 64;
  static constexpr int kWideMax = 135;

  static constexpr int kQsOffset = 2, kQhOffset = 34;

  // The delta goes into the code: q = 8g +- 1 (-9..9) with scale d*(2s+1)/8. Both ggml's
  // dl * (g + delta) and scale * q are exact products of the same real number, so equal bits.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    const uint16_t qh = load_u16le(block + kQhOffset + 2 * sub);
    const float dl = load_fp16le(block) * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
    set_uniform_scale(s, dl * 0.125f);
    const int delta = (qh & 0x8000) ? -1 : 1;
    for (int l = 0; l < 4; ++l) {
      const int index = block[kQsOffset + 4 * sub + l] | (((qh >> (3 * l)) & 7) << 8);
      const uint64_t grid = tables::iq1s_grid(index);
      for (int j = 0; j < 8; ++j) {
        const int g = static_cast<int8_t>((grid >> (8 * j)) & 0xFF);
        q[8 * l + j] = static_cast<int8_t>(8 * g + delta);
      }
    }
  }

  // q10: one 64-value span per pair of sub-blocks, the odd sub-scale folded into w
  // (w = (8g +- 1) * (2s + 1), |w| <= 9 * 15 = 135), scale d/8. Every factor but d is a nonzero
  // integer, so scale * w is the same exact product as ggml's dl * (g + delta).
  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w /*[64]*/,
                                    WideScale& s) {
    fold_wide_multipliers<Iq1S>(block, span, w);
    s.scale = load_fp16le(block) * 0.125f;
    s.offset = 0.0f;
  }
  // The odd sub-scale 2s + 1 of sub-block `sub`, the same for all 32 values.
  STRATA_HD_INLINE static int wide_multiplier(const uint8_t* block, int sub, int /*value*/) {
    return 2 * ((load_u16le(block + kQhOffset + 2 * sub) >> 12) & 7) + 1;
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Iq1S>(block, out);
  }
};
static_assert(Int8BlockFormat<Iq1S>);
static_assert(WideBlockFormat<Iq1S>);
static_assert(Iq1S::kQhOffset + 2 * (Iq1S::kBlockValues / 32) == Iq1S::kBlockBytes);

}  // namespace strata
