// IQ4_XS: 256 values in 136 bytes. d f16 | scales_h u16 (2 high bits per sub-block) |
// scales_l[4] (4 low bits per sub-block) | qs[128]. Sub-block b: 6-bit ls, dl = d * (ls - 32);
// byte 8 + 16b + i holds value 32b + i (low nibble) and 32b + 16 + i (high nibble), each an
// index into kvalues_iq4nl. y = dl * kvalues_iq4nl[code].
#pragma once
#include "formats/decode_helpers.hpp"
#include "formats/tables.hpp"

namespace strata {

struct Iq4Xs {
  static constexpr GgmlType kType = GgmlType::IQ4_XS;
  static constexpr const char* kName = "iq4_xs";
  static constexpr int kBlockValues = 256;
  static constexpr int kBlockBytes = 136;
  static constexpr bool kInt8 = true;
  static constexpr bool kSplitScales = false;
  static constexpr bool kHasOffset = false;
  static constexpr bool kWide = true;
  static constexpr int kWideSpan = 32;
  static constexpr int kWideMax = 127;

  static constexpr int kScalesHOffset = 2, kScalesLOffset = 4, kQsOffset = 8;

  // Codes -127..113; |d * (ls-32) * code| < 2047 * 32 * 127 < 2^24, so every product is exact.
  STRATA_HD static void decode_sub(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    const uint16_t scales_h = load_u16le(block + kScalesHOffset);
    const int low = (block[kScalesLOffset + sub / 2] >> (4 * (sub % 2))) & 0x0F;
    const int ls = low | (((scales_h >> (2 * sub)) & 3) << 4);
    set_uniform_scale(s, load_fp16le(block) * static_cast<float>(ls - 32));
    const uint8_t* qs = block + kQsOffset + 16 * sub;
    for (int i = 0; i < 16; ++i) {
      q[i] = tables::kvalues_iq4nl(qs[i] & 0x0F);
      q[i + 16] = tables::kvalues_iq4nl(qs[i] >> 4);
    }
  }

  STRATA_HD static void decode_wide(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    decode_wide_by_sub<Iq4Xs>(block, span, w, s);
  }

  STRATA_HD static void decode(const uint8_t* block, float* out) {
    decode_by_sub<Iq4Xs>(block, out);
  }
};
static_assert(Int8BlockFormat<Iq4Xs>);
static_assert(WideBlockFormat<Iq4Xs>);
static_assert(Iq4Xs::kQsOffset + Iq4Xs::kBlockValues / 2 == Iq4Xs::kBlockBytes);

}  // namespace strata
