// The q10 Hopper kernels' weight decode: one 32-value piece of a block as f16 integers, with the
// format's lookup table (if any) in shared memory. Device code; tests/gpu/hopper_q10_decode_test
// compares it with the traits' decode_wide on every bundled block of all 25 formats.
#pragma once
#include <cstdint>

#include "common/hd.hpp"
#include "formats/format.hpp"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"

#if defined(__CUDACC__)
#include <cuda_fp16.h>

#include "cuda/blocks/decoders.hpp"
#endif

namespace strata::cuda::fused_q10 {

#if defined(__CUDACC__)
// ---- the device path: f16 pairs straight from the int8 sub-block decoders ----------------------
// One piece = one int8 sub-block (blocks::DeviceDecoder<F>: eight words of four signed codes
// q). Each code becomes the f16 integer w = q * multiplier without a conversion instruction per
// value: byte ^ 0x80 is q + 128 in 0..255, __byte_perm puts it under the f16 bits 0x64.., which is
// 1024 + q + 128 exactly, and one fused multiply-add per pair gives (1152 + q) * m - 1152 * m =
// q * m. The FMA rounds once and q * m is an integer of at most 11 bits, so the result is exact;
// 1152 * m needs at most 9 significant bits (m <= 31), so the bias is exact too
// (hopper_q10_decode_test compares the pieces with decode_wide; the GPU fixture the kernels' bits
// with the CPU arms).
__device__ __forceinline__ void widen_codes_f16(const uint32_t (&words)[8], int multiplier,
                                                uint32_t (&h2)[16] /*value pairs, lower k low*/) {
  const __half2 m2 = __half2half2(__int2half_rn(multiplier));
  const __half2 bias = __half2half2(__int2half_rn(-1152 * multiplier));
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const uint32_t biased = words[i] ^ 0x80808080u;
    const uint32_t lo = __byte_perm(biased, 0x64646464u, 0x4140);
    const uint32_t hi = __byte_perm(biased, 0x64646464u, 0x4342);
    const __half2 w_lo = __hfma2(*reinterpret_cast<const __half2*>(&lo), m2, bias);
    const __half2 w_hi = __hfma2(*reinterpret_cast<const __half2*>(&hi), m2, bias);
    h2[2 * i] = *reinterpret_cast<const uint32_t*>(&w_lo);
    h2[2 * i + 1] = *reinterpret_cast<const uint32_t*>(&w_hi);
  }
}

// One 32-value piece of a block as f16 integer pairs, and the scales (offsets) of the spans the
// piece starts: piece p32 holds values 32 * p32 .. 32 * p32 + 31 of the block. S = 64: the piece
// is half a span (both halves give the span's scale); S = 32: one span; S = 16: two spans.
template <class F>
inline constexpr int kPieceSpans = F::kWideSpan < 32 ? 32 / F::kWideSpan : 1;

__device__ __forceinline__ uint32_t pack_f16_pair(int16_t lo, int16_t hi) {
  const __half2 pair = __halves2half2(__short2half_rn(lo), __short2half_rn(hi));  // exact: |w| <= 2048
  return *reinterpret_cast<const uint32_t*>(&pair);
}

// Generic: the traits' wide decode, integers converted to f16 one by one (exact below 2^11).
template <class F>
struct HalfPiece {
  static constexpr int kTableWords = 1;
  __device__ __forceinline__ static uint32_t table_word(int) { return 0u; }
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[kPieceSpans<F>]) {
    constexpr int S = F::kWideSpan;
    if constexpr (S >= 32) {
      int16_t w[S];
      F::decode_wide(block, p32 * 32 / S, w, s[0]);
      const int base = (p32 * 32) % S;
#pragma unroll
      for (int i = 0; i < 16; ++i) h2[i] = pack_f16_pair(w[base + 2 * i], w[base + 2 * i + 1]);
    } else {
#pragma unroll
      for (int j = 0; j < kPieceSpans<F>; ++j) {
        int16_t w[S];
        F::decode_wide(block, kPieceSpans<F> * p32 + j, w, s[j]);
#pragma unroll
        for (int i = 0; i < S / 2; ++i) h2[j * (S / 2) + i] = pack_f16_pair(w[2 * i], w[2 * i + 1]);
      }
    }
  }
};

// IQ3_S: piece = sub-block p32, multiplier 1 + 2s, span scale d.
template <>
struct HalfPiece<Iq3S> {
  using Decoder = blocks::DeviceDecoder<Iq3S>;
  static constexpr int kTableWords = Decoder::kTableWords;
  __device__ __forceinline__ static uint32_t table_word(int i) { return Decoder::table_word(i); }
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* grid,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    const auto raw = Decoder::load_raw(block, p32, blocks::PlainLoad{});
    uint32_t words[8];
    float sub_block_scale;
    Decoder::decode(raw, grid, words, sub_block_scale);
    widen_codes_f16(words, Decoder::multiplier(raw), h2);
    s[0].scale = fp16_bits_to_float(static_cast<uint16_t>(raw.meta & 0xFFFFu));
    s[0].offset = 0.0f;
  }
};

// Q2_0: piece = sub-block p32, multiplier 1, span scale d.
template <>
struct HalfPiece<Q2_0> {
  using Decoder = blocks::DeviceDecoder<Q2_0>;
  static constexpr int kTableWords = 1;
  __device__ __forceinline__ static uint32_t table_word(int) { return 0u; }
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* table,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    const auto raw = Decoder::load_raw(block, p32, blocks::PlainLoad{});
    uint32_t words[8];
    Decoder::decode(raw, table, words, s[0].scale);
    widen_codes_f16(words, 1, h2);
    s[0].offset = 0.0f;
  }
};
#endif

}  // namespace strata::cuda::fused_q10
