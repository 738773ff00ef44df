// Q1_0: 128 values in 18 bytes. d f16 | 16 bytes of sign bits: bit i%8 of byte 2 + i/8 gives
// value i, y = +d when set, -d otherwise.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q1_0 {
  static constexpr GgmlType kType = GgmlType::Q1_0;
  static constexpr const char* kName = "q1_0";
  static constexpr int kBlockValues = 128;
  static constexpr int kBlockBytes = 18;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 64;
  static constexpr int kWideMax = 1;

  // Codes +-1: d * -1 is exactly -d (with d = 0 both give -0.0).
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    set_uniform_scale(s, load_fp16le(block));
    const uint8_t* bits = block + 2 + 4 * sub;
    for (int i = 0; i < 32; ++i)
      q[i] = static_cast<int8_t>(((bits[i / 8] >> (i % 8)) & 1) ? 1 : -1);
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q1_0>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q1_0>(block, out);
  }
};
static_assert(Int8BlockFormat<Q1_0>);
static_assert(WideBlockFormat<Q1_0>);
static_assert(2 + Q1_0::kBlockValues / 8 == Q1_0::kBlockBytes);

}  // namespace strata
