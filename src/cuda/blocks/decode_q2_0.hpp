// Q2_0 sub-block decode in registers: four 2-bit codes per byte spread to four bytes, minus 1.
// Layout in FORMATS.md (Q2_0) and formats/q2_0.hpp.
#pragma once
#include "cuda/blocks/decoder.hpp"
#include "formats/q2_0.hpp"

namespace strata::cuda::blocks {

template <>
struct DeviceDecoder<Q2_0> {
  struct Raw {
    uint32_t codes[2];  // the sub-block's 8 code bytes (32 values)
    uint32_t d;         // f16 bits
  };
  static constexpr int kTableWords = 1;  // no table
  static constexpr int kMaxAbsCode = 2;  // codes 0..3 -> -1..2

  STRATA_HD_INLINE static uint32_t table_word(int) { return 0u; }
  STRATA_HD_INLINE static const uint32_t* resident_table() { return nullptr; }

  template <class Load = GlobalLoad>
  STRATA_HD_INLINE static Raw load_raw(const uint8_t* block, int sub, Load load = {}) {
    Raw raw;
    raw.codes[0] = load.u32(block + 2 + 8 * sub);
    raw.codes[1] = load.u32(block + 2 + 8 * sub + 4);
    raw.d = load.u16(block);
    return raw;
  }

  STRATA_HD_INLINE static void decode(const Raw& raw, const uint32_t*, uint32_t (&words)[8],
                                      float& scale) {
    scale = fp16_bits_to_float(static_cast<uint16_t>(raw.d));
#if STRATA_DEVICE_PASS
#pragma unroll
#endif
    for (int i = 0; i < 8; ++i) {
      const uint32_t x = (raw.codes[i / 4] >> (8 * (i % 4))) & 0xFFu;
      const uint32_t spread =
          (x | (x << 6) | (x << 12) | (x << 18)) & 0x03030303u;  // code j in byte j
      // Per byte (c | 0x80) - 1 never borrows across bytes; ^ 0x80 then leaves c - 1 as int8.
      words[i] = ((spread | 0x80808080u) - 0x01010101u) ^ 0x80808080u;
    }
  }
};

}  // namespace strata::cuda::blocks
