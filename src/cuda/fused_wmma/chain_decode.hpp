// Weight sub-block decode to packed int8 words for the wmma chain kernels' plain shared tiles,
// host and device (the CPU trap tests run the very functions the kernels call).
//
// ChainDecoder<F>::decode(block, sub, words) gives the 32 codes of sub-block `sub` as 8 words
// (value 4i + j in byte j of words[i]) and returns the sub-block's scale, with the same bits as
// F::decode_sub: the one device decoder of the format (blocks::DeviceDecoder<F>), its table read
// where it lives (these kernels stage none).
// DecodeFault names a classic mistake for the trap tests; the kernels use NoDecodeFault only,
// and only the trap tests reach the faulty IQ3_S decode below.
#pragma once
#include <cstdint>

#include <type_traits>

#include "common/bytes.hpp"
#include "common/hd.hpp"
#include "cuda/blocks/decoders.hpp"
#include "formats/format.hpp"
#include "formats/iq3_s.hpp"

namespace strata::cuda::fused_wmma {

template <bool SignFromBit7 = false, bool Fp16AsInteger = false>
struct DecodeFault {
  static constexpr bool kSignFromBit7 = SignFromBit7;    // one sign (bit 7) for a whole group
  static constexpr bool kFp16AsInteger = Fp16AsInteger;  // the f16 field's integer value as scale
};
using NoDecodeFault = DecodeFault<>;

// An f16 scale field: the 16 raw bits converted as IEEE binary16.
template <class Fault = NoDecodeFault>
STRATA_HD_INLINE float fp16_field(const uint8_t* p) {
  if constexpr (Fault::kFp16AsInteger) return static_cast<float>(load_u16le(p));
  return fp16_bits_to_float(load_u16le(p));
}

// IQ3_S signs of group m (values 4m..4m+3) from its sign byte: byte j of the mask is 0xFF when bit
// 4*(m%2) + j is set -- one bit per value, spread to bytes with the 0x08040201 per-byte masks.
template <class Fault = NoDecodeFault>
STRATA_HD_INLINE uint32_t iq3s_sign_mask(uint8_t sign_byte, int m) {
  if constexpr (Fault::kSignFromBit7) return (sign_byte & 0x80u) ? 0xFFFFFFFFu : 0u;
  const uint32_t nibble = (static_cast<uint32_t>(sign_byte) >> (4 * (m % 2))) & 0xFu;
  const uint32_t bits = (nibble * 0x01010101u) & 0x08040201u;  // byte j keeps only bit j
  return (((bits + 0x7F7F7F7Fu) & 0x80808080u) >> 7) * 0xFFu;  // a non-zero byte becomes 0xFF
}

// Bytewise negation where mask bytes are 0xFF: (x ^ 0xFF) + 1 = -x. No carry crosses a byte
// because every magnitude is at least 1 (IQ3_S grid bytes are odd).
STRATA_HD_INLINE uint32_t negate_bytes(uint32_t magnitudes, uint32_t mask) {
  return (magnitudes ^ mask) + (mask & 0x01010101u);
}

template <class F, class Fault = NoDecodeFault>
struct ChainDecoder {
  static_assert(std::is_same_v<Fault, NoDecodeFault>, "decode faults exist for IQ3_S only");
  STRATA_HD static float decode(const uint8_t* block, int sub, uint32_t (&words)[8]) {
    return blocks::decode_sub_block<F>(block, sub, blocks::DeviceDecoder<F>::resident_table(), words);
  }
};

// The trap tests' faulty IQ3_S decodes: each group's word from its grid word and a per-byte sign
// mask, with the fault applied.
template <bool SignFromBit7, bool Fp16AsInteger>
  requires(SignFromBit7 || Fp16AsInteger)
struct ChainDecoder<Iq3S, DecodeFault<SignFromBit7, Fp16AsInteger>> {
  using Fault = DecodeFault<SignFromBit7, Fp16AsInteger>;
  STRATA_HD static float decode(const uint8_t* block, int sub, uint32_t (&words)[8]) {
    for (int m = 0; m < 8; ++m) {
      const uint32_t magnitudes = Iq3S::group_magnitudes(block, sub, m);
      const uint8_t sign_byte = block[Iq3S::kSignsOffset + 4 * sub + m / 2];
      words[m] = negate_bytes(magnitudes, iq3s_sign_mask<Fault>(sign_byte, m));
    }
    return fp16_field<Fault>(block) * static_cast<float>(Iq3S::sub_scale(block, sub));
  }
};

}  // namespace strata::cuda::fused_wmma
