// TQ1_0: 256 values in 54 bytes. qs[48] | qh[4] | d f16. Each byte packs 5 (qs) or 4 (qh)
// base-3 digits as a fixed-point fraction: digit n of byte b is ((uint8_t)(b * 3^n) * 3) >> 8.
// Value order: 0..159 from qs[0..31] (digit v/32 of byte v%32), 160..239 from qs[32..47]
// (digit w/16 of byte 32 + w%16, w = v-160), 240..255 from qh (digit w/4 of qh[w%4], w = v-240).
// y = (digit - 1) * d.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Tq1_0 {
  static constexpr GgmlType kType = GgmlType::TQ1_0;
  static constexpr const char* kName = "tq1_0";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 54;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 64;
  static constexpr int kWideMax = 1;

  static constexpr int kQsBytes = 48, kQhOffset = 48, kDOffset = 52;

  // Digit n (0..4) of a packed byte, 0..2 for any byte value. 3^n is byte n of kPow3 (a constant
  // rather than an array, which device code indexed at run time would keep in local memory).
  STRATA_HD_INLINE static int digit(uint8_t packed, int n) {
    constexpr uint64_t kPow3 = 0x51'1B'09'03'01ull;  // 81, 27, 9, 3, 1
    const uint8_t shifted = static_cast<uint8_t>(packed * static_cast<uint8_t>(kPow3 >> (8 * n)));
    return (static_cast<int>(shifted) * 3) >> 8;
  }

  STRATA_HD_INLINE static int value_digit(const uint8_t* block, int v) {
    if (v < 160) return digit(block[v % 32], v / 32);
    if (v < 240) return digit(block[32 + (v - 160) % 16], (v - 160) / 16);
    return digit(block[kQhOffset + (v - 240) % 4], (v - 240) / 4);
  }

  // Codes -1..1.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    set_uniform_scale(s, load_fp16le(block + kDOffset));
    for (int i = 0; i < 32; ++i) q[i] = static_cast<int8_t>(value_digit(block, 32 * sub + i) - 1);
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Tq1_0>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Tq1_0>(block, out);
  }
};
static_assert(Int8BlockFormat<Tq1_0>);
static_assert(WideBlockFormat<Tq1_0>);
static_assert(32 * 5 + 16 * 5 + 4 * 4 == Tq1_0::kBlockValues);
static_assert(Tq1_0::kDOffset + 2 == Tq1_0::kBlockBytes);

}  // namespace strata
