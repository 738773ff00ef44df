// MXFP4: 32 values in 17 bytes. e (E8M0 shared exponent) | qs[16]: byte j holds value j (low
// nibble) and value j+16 (high nibble), E2M1 codes. y = kvalues_mxfp4[code] * 2^(e - 128):
// the table holds twice the E2M1 value, hence the bias of 128.
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

// E8M0 exponent e -> 2^(e - 128), built as fp32 bits: e = 0, 1 give the subnormals 2^-128 and
// 2^-127; e = 255 is 2^127, not NaN (ggml's convention).
STRATA_HD_INLINE float e8m0_half_to_float(uint8_t e) {
  const uint32_t bits = (e < 2) ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
  return bits_to_float(bits);
}

struct Mxfp4 {
  static constexpr GgmlType kType = GgmlType::MXFP4;
  static constexpr const char* kName = "mxfp4";
  static constexpr int kBlockValues = 32;
  static constexpr int kBlockBytes = 17;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 12;

  // Codes are the doubled E2M1 values (-12..12); a power-of-two scale keeps every product exact,
  // subnormal scales included (code * 2^-128 is a multiple of 2^-149).
  STRATA_HD static void decode_sub(const uint8_t* block, int /*sub: always 0*/, int8_t* q /*[32]*/,
                                   SubScale& s) {
    set_uniform_scale(s, e8m0_half_to_float(block[0]));
    const uint8_t* qs = block + 1;
    for (int j = 0; j < 16; ++j) {
      q[j] = tables::kvalues_mxfp4(qs[j] & 0x0F);
      q[j + 16] = tables::kvalues_mxfp4(qs[j] >> 4);
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Mxfp4>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Mxfp4>(block, out);
  }
};
static_assert(Int8BlockFormat<Mxfp4>);
static_assert(WideBlockFormat<Mxfp4>);
static_assert(1 + Mxfp4::kBlockValues / 2 == Mxfp4::kBlockBytes);

}  // namespace strata
