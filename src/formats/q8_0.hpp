// Q8_0: 32 values in 34 bytes. d f16 | q[32] int8. y = q * d.
#pragma once
#include "formats/decode_helpers.hpp"

namespace strata {

struct Q8_0 {
  static constexpr GgmlType kType = GgmlType::Q8_0;
  static constexpr const char* kName = "q8_0";
  static constexpr int kBlockValues = 32;
  static constexpr int kBlockBytes = 34;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 128;

  // NOTE: codes are the stored bytes, so -128 occurs in arbitrary blocks (ggml's quantiser
  // stays in -127..127). An int8 x int8 dot of 32 such products still fits int32 easily.
  STRATA_HD static void decode_sub(const uint8_t* block, int /*sub: always 0*/, int8_t* q /*[32]*/,
                                   SubScale& s) {
    set_uniform_scale(s, load_fp16le(block));
    for (int i = 0; i < 32; ++i) q[i] = static_cast<int8_t>(block[2 + i]);
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Q8_0>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Q8_0>(block, out);
  }
};
static_assert(Int8BlockFormat<Q8_0>);
static_assert(WideBlockFormat<Q8_0>);
static_assert(2 + Q8_0::kBlockValues == Q8_0::kBlockBytes);

}  // namespace strata
