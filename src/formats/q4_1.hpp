// Q4_1: 32 values in 20 bytes. d f16 | m f16 | qs[16] nibbles as in Q4_0. y = nibble * d + m.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q4_1 {
  static constexpr GgmlType kType = GgmlType::Q4_1;
  static constexpr const char* kName = "q4_1";
  static constexpr int kBlockValues = 32;
  static constexpr int kBlockBytes = 20;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = true;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 15;

  // Codes 0..15; the min m is the offset (one rounding: d*q is exact, + m rounds as in ggml).
  STRATA_HD static void decode_sub(const uint8_t* block, int /*sub: always 0*/, int8_t* q /*[32]*/,
                                   SubScale& s) {
    s.scale[0] = s.scale[1] = load_fp16le(block);
    s.offset[0] = s.offset[1] = load_fp16le(block + 2);
    const uint8_t* qs = block + 4;
    for (int j = 0; j < 16; ++j) {
      q[j] = static_cast<int8_t>(qs[j] & 0x0F);
      q[j + 16] = static_cast<int8_t>(qs[j] >> 4);
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q4_1>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q4_1>(block, out);
  }
};
static_assert(Int8BlockFormat<Q4_1>);
static_assert(WideBlockFormat<Q4_1>);
static_assert(4 + Q4_1::kBlockValues / 2 == Q4_1::kBlockBytes);

}  // namespace strata
