// Q5_1: 32 values in 24 bytes. d f16 | m f16 | qh u32 (5th bits) | qs[16] low nibbles.
// y = code * d + m with code = nibble | (bit << 4), 0..31.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q5_1 {
  static constexpr GgmlType kType = GgmlType::Q5_1;
  static constexpr const char* kName = "q5_1";
  static constexpr int kBlockValues = 32;
  static constexpr int kBlockBytes = 24;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = true;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 31;

  STRATA_HD static void decode_sub(const uint8_t* block, int /*sub: always 0*/, int8_t* q /*[32]*/,
                                   SubScale& s) {
    s.scale[0] = s.scale[1] = load_fp16le(block);
    s.offset[0] = s.offset[1] = load_fp16le(block + 2);
    const uint32_t qh = load_u32le(block + 4);
    const uint8_t* qs = block + 8;
    for (int j = 0; j < 16; ++j) {
      const int high_lo = static_cast<int>((qh >> j) & 1u) << 4;
      const int high_hi = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      q[j] = static_cast<int8_t>((qs[j] & 0x0F) | high_lo);
      q[j + 16] = static_cast<int8_t>((qs[j] >> 4) | high_hi);
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q5_1>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q5_1>(block, out);
  }
};
static_assert(Int8BlockFormat<Q5_1>);
static_assert(WideBlockFormat<Q5_1>);
static_assert(4 + 4 + Q5_1::kBlockValues / 2 == Q5_1::kBlockBytes);

}  // namespace strata
