// Weight sub-block decode straight to packed int8 words for the fused kernel's shared tiles.
//
// WordDecoder<F>::decode(block, sub, words) gives the 32 codes of sub-block `sub` as 8 words
// (value 4i + j in byte j of words[i]) and returns the sub-block's scale. The generic version goes
// through F::decode_sub; a specialisation may build the words with SIMD-in-a-word operations but
// must produce the same codes and the same scale bits (the fused-vs-production bitwise test
// checks every one of them).
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
  __device__ __forceinline__ static float decode(const uint8_t* block, int sub, uint32_t (&words)[8]) {
    int8_t q[32];
    SubScale scale;
    F::decode_sub(block, sub, q, scale);
#pragma unroll
    for (int i = 0; i < 8; ++i) words[i] = pack4(q + 4 * i);
    return scale.scale[0];
  }
};

// IQ3_S: group m's four magnitudes are one grid word; its four sign bits become a byte mask
// (bit j -> 0xFF in byte j) and the word is negated bytewise where the mask is set.
template <>
struct WordDecoder<Iq3S> {
  __device__ __forceinline__ static float decode(const uint8_t* block, int sub, uint32_t (&words)[8]) {
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const uint32_t magnitudes = Iq3S::group_magnitudes(block, sub, m);  // bytes 1..15, odd
      const uint32_t sign_bits = (block[Iq3S::kSignsOffset + 4 * sub + m / 2] >> (4 * (m % 2))) & 0xFu;
      const uint32_t mask = ((sign_bits * 0x00204081u) & 0x01010101u) * 0xFFu;  // bit j -> byte j
      words[m] = __vsub4(magnitudes ^ mask, mask);  // -x = (x ^ 0xFF) - 0xFF per byte
    }
    // NOTE: the expression of Iq3S::decode_sub, so the scale has the same bits.
    return load_fp16le(block) * static_cast<float>(Iq3S::sub_scale(block, sub));
  }
};

}  // namespace strata::cuda::fused
