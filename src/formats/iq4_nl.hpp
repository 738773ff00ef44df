// IQ4_NL: 32 values in 18 bytes. d f16 | qs[16]: byte j holds value j (low nibble) and value j+16
// (high nibble), each an index into the 16-level codebook kvalues_iq4nl (-127..113).
// y = d * kvalues_iq4nl[code].
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

struct Iq4Nl {
  static constexpr GgmlType kType = GgmlType::IQ4_NL;
  static constexpr const char* kName = "iq4_nl";
  static constexpr int kBlockValues = 32;
  static constexpr int kBlockBytes = 18;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 127;

  // Codes are the codebook values themselves (-127..113), so the int8 product needs no lookup.
  STRATA_HD static void decode_sub(const uint8_t* block, int /*sub: always 0*/, int8_t* q /*[32]*/,
                                   SubScale& s) {
    set_uniform_scale(s, load_fp16le(block));
    const uint8_t* qs = block + 2;
    for (int j = 0; j < 16; ++j) {
      q[j] = tables::kvalues_iq4nl(qs[j] & 0x0F);
      q[j + 16] = tables::kvalues_iq4nl(qs[j] >> 4);
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Iq4Nl>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Iq4Nl>(block, out);
  }
};
static_assert(Int8BlockFormat<Iq4Nl>);
static_assert(WideBlockFormat<Iq4Nl>);
static_assert(2 + Iq4Nl::kBlockValues / 2 == Iq4Nl::kBlockBytes);

}  // namespace strata
