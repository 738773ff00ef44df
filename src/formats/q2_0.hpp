// Q2_0: 64 values in 18 bytes. d f16 | 16 bytes of 2-bit codes, four per byte, lowest pair first.
// y = (code - 1) * d, so codes 0..3 map to -d, 0, +d, +2d.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q2_0 {
  static constexpr GgmlType kType = GgmlType::Q2_0;
  static constexpr const char* kName = "q2_0";
  static constexpr int kBlockValues = 64;
  static constexpr int kBlockBytes = 18;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 64;
  static constexpr int kWideMax = 2;

  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q, SubScale& s) {
    const float d = load_fp16le(block);
    s.scale[0] = s.scale[1] = d;
    s.offset[0] = s.offset[1] = 0.0f;
    const uint8_t* codes = block + 2 + 8 * sub;
    for (int i = 0; i < 32; ++i)
      q[i] = static_cast<int8_t>(((codes[i / 4] >> (2 * (i % 4))) & 3) - 1);
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q2_0>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q2_0>(block, out);
  }
};
static_assert(Int8BlockFormat<Q2_0>);
static_assert(WideBlockFormat<Q2_0>);
static_assert(2 + Q2_0::kBlockValues / 4 == Q2_0::kBlockBytes);

}  // namespace strata
