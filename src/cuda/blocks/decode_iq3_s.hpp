// IQ3_S sub-block decode in registers: 8 grid lookups from a (shared-memory) copy of iq3s_grid,
// signs applied four bytes at a time. Layout in FORMATS.md (IQ3_S) and formats/iq3_s.hpp.
#pragma once
#include "cuda/blocks/decoder.hpp"
#include "formats/iq3_s.hpp"
#include "formats/tables.hpp"

namespace strata::cuda::blocks {

template <>
struct DeviceDecoder<Iq3S> {
  struct Raw {
    uint32_t qs[2];  // low 8 bits of the sub-block's 8 grid indices, index m in byte m
    uint32_t signs;  // one sign bit per value, value v at bit v
    uint32_t meta;   // d f16 in bits 0..15, qh (index bit 8 of m at bit 16 + m), 4-bit sub-scale
                     // at 24..27
  };
  static constexpr int kTableWords = tables::k_iq3s_grid_size;
  static constexpr int kMaxAbsCode = 15;  // grid magnitudes are odd, 1..15

  STRATA_HD_INLINE static uint32_t table_word(int i) { return tables::iq3s_grid(i); }
  STRATA_HD_INLINE static const uint32_t* resident_table() {
#if STRATA_DEVICE_PASS
    return tables::device_iq3s_grid;
#else
    return tables::host_iq3s_grid;
#endif
  }

  template <class Load = GlobalLoad>
  STRATA_HD_INLINE static Raw load_raw(const uint8_t* block, int sub, Load load = {}) {
    Raw raw;
    raw.qs[0] = load.u32(block + Iq3S::kQsOffset + 8 * sub);
    raw.qs[1] = load.u32(block + Iq3S::kQsOffset + 8 * sub + 4);
    raw.signs = load.u32(block + Iq3S::kSignsOffset + 4 * sub);
    const uint32_t qh_pair =
        load.u16(block + Iq3S::kQhOffset + (sub & ~1));  // qh[sub & ~1], qh[sub | 1]
    const uint32_t scale_pair = load.u16(block + Iq3S::kScalesOffset + 2 * (sub / 4));
    const uint32_t qh = (qh_pair >> (8 * (sub & 1))) & 0xFFu;
    const uint32_t scale_nibble = (scale_pair >> (8 * ((sub / 2) & 1) + 4 * (sub & 1))) & 0xFu;
    raw.meta = load.u16(block) | (qh << 16) | (scale_nibble << 24);
    return raw;
  }

  // The odd multiplier 1 + 2s of the sub-block (the q10 kernels fold it into their integers).
  STRATA_HD_INLINE static int multiplier(const Raw& raw) {
    return 1 + 2 * static_cast<int>((raw.meta >> 24) & 0xFu);
  }

  STRATA_HD_INLINE static void decode(const Raw& raw, const uint32_t* grid /*[512]*/,
                                      uint32_t (&words)[8], float& scale) {
    // Same two fp32 factors and product as Iq3S::decode_sub.
    scale = fp16_bits_to_float(static_cast<uint16_t>(raw.meta & 0xFFFFu)) *
            static_cast<float>(multiplier(raw));
#if STRATA_DEVICE_PASS
#pragma unroll
#endif
    for (int m = 0; m < 8; ++m) {
      const uint32_t index =
          ((raw.qs[m / 4] >> (8 * (m % 4))) & 0xFFu) | (((raw.meta >> (16 + m)) & 1u) << 8);
      const uint32_t magnitudes = grid[index];
      // Sign bits 4m..4m+3 -> 0x01 in each negative byte (the four nibble bits never overlap).
      const uint32_t negative = (((raw.signs >> (4 * m)) & 0xFu) * 0x00204081u) & 0x01010101u;
      // Per byte: m ^ 0xFF + 1 = -m for negative bytes; magnitudes <= 15, so no carry crosses
      // bytes.
      words[m] = (magnitudes ^ (negative * 0xFFu)) + negative;
    }
  }
};

}  // namespace strata::cuda::blocks
