// Q5_0: 32 values in 22 bytes. d f16 | qh u32 (bit i = 5th bit of value i) | qs[16] low nibbles
// as in Q4_0. y = (code - 16) * d with code = nibble | (bit << 4).
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q5_0 {
  static constexpr GgmlType kType = GgmlType::Q5_0;
  static constexpr const char* kName = "q5_0";
  static constexpr int kBlockValues = 32;
  static constexpr int kBlockBytes = 22;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 16;

  // Codes -16..15 (the -16 folded in, no offset term).
  STRATA_HD static void decode_sub(const uint8_t* block, int /*sub: always 0*/, int8_t* q /*[32]*/,
                                   SubScale& s) {
    set_uniform_scale(s, load_fp16le(block));
    const uint32_t qh = load_u32le(block + 2);  // NOTE: only 2-byte aligned
    const uint8_t* qs = block + 6;
    for (int j = 0; j < 16; ++j) {
      const int high_lo = static_cast<int>((qh >> j) & 1u) << 4;
      const int high_hi = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      q[j] = static_cast<int8_t>(((qs[j] & 0x0F) | high_lo) - 16);
      q[j + 16] = static_cast<int8_t>(((qs[j] >> 4) | high_hi) - 16);
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q5_0>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q5_0>(block, out);
  }
};
static_assert(Int8BlockFormat<Q5_0>);
static_assert(WideBlockFormat<Q5_0>);
static_assert(2 + 4 + Q5_0::kBlockValues / 2 == Q5_0::kBlockBytes);

}  // namespace strata
