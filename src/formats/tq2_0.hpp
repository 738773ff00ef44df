// TQ2_0: 256 values in 66 bytes. qs[64] 2-bit codes | d f16. Value 128c + 32l + m (c < 2, l < 4,
// m < 32) is bits 2l..2l+1 of qs[32c + m]. y = (code - 1) * d.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Tq2_0 {
  static constexpr GgmlType kType = GgmlType::TQ2_0;
  static constexpr const char* kName = "tq2_0";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 66;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 64;
  static constexpr int kWideMax = 2;

  static constexpr int kDOffset = 64;

  // Codes -1..2 (code 3 = +2d occurs in arbitrary blocks, never from the ternary quantiser).
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    set_uniform_scale(s, load_fp16le(block + kDOffset));
    const uint8_t* qs = block + 32 * (sub / 4);
    const int shift = 2 * (sub % 4);
    for (int m = 0; m < 32; ++m) q[m] = static_cast<int8_t>(((qs[m] >> shift) & 3) - 1);
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Tq2_0>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Tq2_0>(block, out);
  }
};
static_assert(Int8BlockFormat<Tq2_0>);
static_assert(WideBlockFormat<Tq2_0>);
static_assert(Tq2_0::kDOffset + 2 == Tq2_0::kBlockBytes);

}  // namespace strata
