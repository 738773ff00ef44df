// Weight sub-block decode for the fused kernel's shared tiles, split in two phases so that the
// global loads of a stage are in flight while the tensor cores multiply the previous stage:
//   Raw raw = WordDecoder<F>::load(block, sub);              // global loads only
//   float scale = WordDecoder<F>::decode(raw, table, words); // later: 8 packed int8 words
// words[i] holds values 4i..4i+3, lowest value in the lowest byte. kTableWords > 0 asks the kernel
// for a shared copy of the format's lookup table (fill_table), passed back to decode.
// The generic version goes through F::decode_sub; a specialisation must give the same codes and
// the same scale bits (the fused-vs-production bitwise test checks every one of them).
#pragma once
#include <cstdint>

#include "common/bytes.hpp"
#include "formats/format.hpp"
#include "formats/iq3_s.hpp"

namespace strata::cuda::fused {

__device__ __forceinline__ uint32_t pack4(const int8_t* q) {
  return static_cast<uint32_t>(static_cast<uint8_t>(q[0])) | (static_cast<uint32_t>(static_cast<uint8_t>(q[1])) << 8) |
         (static_cast<uint32_t>(static_cast<uint8_t>(q[2])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(q[3])) << 24);
}

template <class F>
struct WordDecoder {
  static constexpr int kTableWords = 0;
  struct Raw {
    const uint8_t* block;
    int sub;
  };
  __device__ __forceinline__ static void fill_table(uint32_t*, int, int) {}
  __device__ __forceinline__ static Raw load(const uint8_t* block, int sub) { return {block, sub}; }
  __device__ __forceinline__ static float decode(const Raw& raw, const uint32_t*, uint32_t (&words)[8]) {
    int8_t q[32];
    SubScale scale;
    F::decode_sub(raw.block, raw.sub, q, scale);
#pragma unroll
    for (int i = 0; i < 8; ++i) words[i] = pack4(q + 4 * i);
    return scale.scale[0];
  }
};

// IQ3_S: the sub-block's fields are loaded with 16-bit loads (blocks are only 2-byte aligned);
// group m's four magnitudes are one word of the shared grid; its four sign bits become a byte
// mask (bit j -> 0xFF in byte j) and the word is negated bytewise where the mask is set.
template <>
struct WordDecoder<Iq3S> {
  static constexpr int kTableWords = 512;
  struct Raw {
    uint32_t qs[2];  // low 8 index bits of groups 0..7, one byte each
    uint32_t signs;  // sign bits of values 0..31
    uint32_t misc;   // qh byte | scale nibble << 8 | f16 bits of d << 16
  };
  __device__ __forceinline__ static void fill_table(uint32_t* table, int tid, int threads) {
    for (int i = tid; i < kTableWords; i += threads) table[i] = tables::iq3s_grid(i);
  }
  __device__ __forceinline__ static uint32_t load_u16(const uint8_t* p) {
    return *reinterpret_cast<const uint16_t*>(p);  // p is even: blocks are 2-byte aligned, fields even
  }
  __device__ __forceinline__ static Raw load(const uint8_t* block, int sub) {
    Raw raw;
    const uint8_t* qs = block + Iq3S::kQsOffset + 8 * sub;
    raw.qs[0] = load_u16(qs) | (load_u16(qs + 2) << 16);
    raw.qs[1] = load_u16(qs + 4) | (load_u16(qs + 6) << 16);
    const uint8_t* signs = block + Iq3S::kSignsOffset + 4 * sub;
    raw.signs = load_u16(signs) | (load_u16(signs + 2) << 16);
    const uint32_t nibble = (block[Iq3S::kScalesOffset + sub / 2] >> (4 * (sub % 2))) & 15u;
    raw.misc = block[Iq3S::kQhOffset + sub] | (nibble << 8) | (load_u16(block) << 16);
    return raw;
  }
  __device__ __forceinline__ static float decode(const Raw& raw, const uint32_t* table, uint32_t (&words)[8]) {
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const uint32_t index = ((raw.qs[m / 4] >> (8 * (m % 4))) & 0xFFu) | (((raw.misc >> m) & 1u) << 8);
      const uint32_t magnitudes = table[index];                     // bytes 1..15, odd
      const uint32_t sign_bits = (raw.signs >> (4 * m)) & 0xFu;     // values 4m..4m+3
      const uint32_t mask = ((sign_bits * 0x00204081u) & 0x01010101u) * 0xFFu;  // bit j -> byte j
      words[m] = __vsub4(magnitudes ^ mask, mask);                  // -x = (x ^ 0xFF) - 0xFF per byte
    }
    // NOTE: the expression of Iq3S::decode_sub (d * (1 + 2 * nibble)), so the scale has the same bits.
    const int sub_scale = 1 + 2 * static_cast<int>((raw.misc >> 8) & 15u);
    return fp16_bits_to_float(static_cast<uint16_t>(raw.misc >> 16)) * static_cast<float>(sub_scale);
  }
};

}  // namespace strata::cuda::fused
