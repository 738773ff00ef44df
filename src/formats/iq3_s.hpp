// IQ3_S: 256 values in 110 bytes. d f16 | qs[64] low index bits | qh[8] index bit 8 |
// signs[32] one bit per value | scales[4] 4-bit sub-scales. Sub-block b = values 32b..32b+31.
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

struct Iq3S {
  static constexpr GgmlType kType = GgmlType::IQ3_S;
  static constexpr const char* kName = "iq3_s";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 110;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 64;
  static constexpr int kWideMax = 465;

  static constexpr int kQsOffset = 2, kQhOffset = 66, kSignsOffset = 74, kScalesOffset = 106;

  // Odd multiplier 1..31 of d for sub-block `sub`.
  STRATA_HD_INLINE static int sub_scale(const uint8_t* block, int sub) {
    return 1 + 2 * ((block[kScalesOffset + sub / 2] >> (4 * (sub % 2))) & 15);
  }

  // The four magnitudes of group m (values 4m..4m+3) of sub-block `sub`, one per byte.
  STRATA_HD_INLINE static uint32_t group_magnitudes(const uint8_t* block, int sub, int m) {
    const int index = block[kQsOffset + 8 * sub + m] | (((block[kQhOffset + sub] >> m) & 1) << 8);
    return tables::iq3s_grid(index);
  }

  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q, SubScale& s) {
    const float scale = load_fp16le(block) * static_cast<float>(sub_scale(block, sub));
    s.scale[0] = s.scale[1] = scale;
    s.offset[0] = s.offset[1] = 0.0f;
    for (int m = 0; m < 8; ++m) {
      const uint32_t magnitudes = group_magnitudes(block, sub, m);
      const uint8_t signs = block[kSignsOffset + 4 * sub + m / 2];
      for (int j = 0; j < 4; ++j) {
        const int magnitude = static_cast<int>((magnitudes >> (8 * j)) & 0xFF);
        const bool negative = (signs >> (4 * (m % 2) + j)) & 1;
        q[4 * m + j] = static_cast<int8_t>(negative ? -magnitude : magnitude);
      }
    }
  }

  // q10: one 64-value span per pair of sub-blocks, the odd sub-scale folded into w
  // (w = grid * sign * (1 + 2s), |w| <= 15 * 31 = 465), scale d. The multiplier is positive and
  // no grid magnitude is zero, so d * w has the sign and bits of ggml's (d * (1 + 2s)) * q.
  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w /*[64]*/,
                                    WideScale& s) {
    fold_wide_multipliers<Iq3S>(block, span, w);
    s.scale = load_fp16le(block);
    s.offset = 0.0f;
  }
  // The odd sub-scale of sub-block `sub`, the same for all 32 values.
  STRATA_HD_INLINE static int wide_multiplier(const uint8_t* block, int sub, int /*value*/) {
    return sub_scale(block, sub);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Iq3S>(block, out);
  }
};
static_assert(Int8BlockFormat<Iq3S>);
static_assert(WideBlockFormat<Iq3S>);
static_assert(Iq3S::kScalesOffset + Iq3S::kBlockValues / 64 == Iq3S::kBlockBytes);

}  // namespace strata
