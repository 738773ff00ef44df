// Q5_K: 256 values in 176 bytes. d f16 | dmin f16 | scales[12] as in Q4_K | qh[32] | qs[128].
// Sub-block s: low 4 bits as in Q4_K, 5th bit = bit s of qh[l], l < 32. y = (d*sc)*q - dmin*m.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q5_K {
  static constexpr GgmlType kType = GgmlType::Q5_K;
  static constexpr const char* kName = "q5_K";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 176;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = true;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 31;

  static constexpr int kScalesOffset = 4, kQhOffset = 16, kQsOffset = 48;

  // Codes 0..31; (d*sc)*q stays within 24 bits (11 + 6 + 5), so the product is exact.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    int sc, m;
    k4_scale_min(block + kScalesOffset, sub, sc, m);
    s.scale[0] = s.scale[1] = load_fp16le(block) * static_cast<float>(sc);
    s.offset[0] = s.offset[1] = -(load_fp16le(block + 2) * static_cast<float>(m));
    const uint8_t* qs = block + kQsOffset + 32 * (sub / 2);
    const uint8_t* qh = block + kQhOffset;
    const int shift = 4 * (sub % 2);
    for (int l = 0; l < 32; ++l)
      q[l] = static_cast<int8_t>(((qs[l] >> shift) & 0x0F) | (((qh[l] >> sub) & 1) << 4));
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q5_K>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q5_K>(block, out);
  }
};
static_assert(Int8BlockFormat<Q5_K>);
static_assert(WideBlockFormat<Q5_K>);
static_assert(Q5_K::kQsOffset + Q5_K::kBlockValues / 2 == Q5_K::kBlockBytes);

}  // namespace strata
