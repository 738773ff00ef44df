// Q4_0: 32 values in 18 bytes. d f16 | qs[16]: byte j holds value j (low nibble) and value j+16
// (high nibble). y = (nibble - 8) * d.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q4_0 {
  static constexpr GgmlType kType = GgmlType::Q4_0;
  static constexpr const char* kName = "q4_0";
  static constexpr int kBlockValues = 32;
  static constexpr int kBlockBytes = 18;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 8;

  // The -8 is folded into the code (-8..7) rather than an offset, so no activation sums needed.
  STRATA_HD static void decode_sub(const uint8_t* block, int /*sub: always 0*/, int8_t* q /*[32]*/,
                                   SubScale& s) {
    set_uniform_scale(s, load_fp16le(block));
    const uint8_t* qs = block + 2;
    for (int j = 0; j < 16; ++j) {
      q[j] = static_cast<int8_t>((qs[j] & 0x0F) - 8);
      q[j + 16] = static_cast<int8_t>((qs[j] >> 4) - 8);
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q4_0>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q4_0>(block, out);
  }
};
static_assert(Int8BlockFormat<Q4_0>);
static_assert(WideBlockFormat<Q4_0>);
static_assert(2 + Q4_0::kBlockValues / 2 == Q4_0::kBlockBytes);

}  // namespace strata
