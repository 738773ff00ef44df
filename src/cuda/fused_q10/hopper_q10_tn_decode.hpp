// The weight decode of the tokens-on-N q10 Hopper kernels (hopper_q10_tn_kernel.cuh): a consumer
// thread's share of one 64-value chunk of one weight row, decoded straight into the wgmma A
// fragment (registers), never through shared memory. Lane (group, tig) of a warp holds, per weight
// row, values 2 tig + 8 m and 2 tig + 8 m + 1 of the chunk as the f16 pair of word m (m = 0..7,
// lower k in the low half): words 2s and 2s + 1 are the row's part of the A fragment of k16 step s
// (wgmma_f16.cuh). Device code; tests/gpu/hopper_q10_decode_test compares it with the traits'
// decode_wide on every bundled block.
#pragma once
#include <cstdint>
#include <type_traits>

#include "formats/format.hpp"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"

#if defined(__CUDACC__)
#include <cuda_fp16.h>

#include "cuda/fused_q10/hopper_q10_decode.hpp"
#endif

namespace strata::cuda::fused_q10 {

// The formats with a fragment decode (spans of 64, no offset): their stages run the tokens-on-N
// kernels; every other format's the column kernels (hopper_q10_kernel.cuh).
template <class F>
inline constexpr bool kHopperQ10TnCarries = std::is_same_v<F, Iq3S> || std::is_same_v<F, Q2_0>;

#if defined(__CUDACC__)
template <class F>
struct FragmentChunk;  // one specialisation per format of kHopperQ10TnCarries

// IQ3_S: chunk q (0..3) of a 256-value block is sub-blocks 2q and 2q + 1. The lane's values of a
// sub-block are the halves `tig % 2` of its grid entries 2 i + tig / 2 (i = 0..3): one 4-byte f16
// table load per pair (the table of HalfPiece<Iq3S>), the two sign bits onto the f16 sign bits,
// one HMUL2 by the odd multiplier 1 + 2 s: decode_wide's integers (|w| <= 465), span scale d.
template <>
struct FragmentChunk<Iq3S> {
  static constexpr int kTableWords = HalfPiece<Iq3S>::kTableWords;
  __device__ __forceinline__ static uint32_t table_word(int i) { return HalfPiece<Iq3S>::table_word(i); }
  __device__ __forceinline__ static void decode(const uint8_t* block, int q, int tig, const uint32_t* grid,
                                                uint32_t (&w)[8], float& scale) {
    const blocks::PlainLoad load;
    scale = fp16_bits_to_float(static_cast<uint16_t>(load.u16(block)));
    const uint32_t qh2 = load.u16(block + Iq3S::kQhOffset + 2 * q);  // qh of sub-blocks 2q, 2q + 1
    const uint32_t scales = block[Iq3S::kScalesOffset + q];          // their 4-bit sub-scales
    const int byte_shift = 8 * (tig / 2), sign_shift = 2 * tig;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int sub = 2 * q + j;
      const uint32_t signs = load.u32(block + Iq3S::kSignsOffset + 4 * sub);
      const uint32_t qh = qh2 >> (8 * j);
      const __half2 m2 = __half2half2(__int2half_rn(1 + 2 * static_cast<int>((scales >> (4 * j)) & 0xFu)));
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t low = (load.u16(block + Iq3S::kQsOffset + 8 * sub + 2 * i) >> byte_shift) & 0xFFu;
        const uint32_t index = low | (((qh >> (2 * i + tig / 2)) & 1u) << 8);
        const uint32_t s2 = signs >> (8 * i + sign_shift);
        const uint32_t sign_bits = ((s2 & 1u) << 15) | ((s2 & 2u) << 30);
        const uint32_t magnitudes = grid[2 * index + (tig % 2)] ^ sign_bits;
        const __half2 v = __hmul2(*reinterpret_cast<const __half2*>(&magnitudes), m2);
        w[4 * j + i] = *reinterpret_cast<const uint32_t*>(&v);
      }
    }
  }
};

// Q2_0: the 64-value block is the chunk (q = 0). The lane's two codes of word m are bits
// 4 (tig % 2) .. + 3 of byte 2 m + tig / 2; under the f16 bits 0x64 (1024 + c) and one HADD2 of
// -1025 they are c - 1 exactly. Span scale d.
template <>
struct FragmentChunk<Q2_0> {
  static constexpr int kTableWords = 1;
  __device__ __forceinline__ static uint32_t table_word(int) { return 0u; }
  __device__ __forceinline__ static void decode(const uint8_t* block, int /*q*/, int tig, const uint32_t* /*table*/,
                                                uint32_t (&w)[8], float& scale) {
    const blocks::PlainLoad load;
    scale = fp16_bits_to_float(static_cast<uint16_t>(load.u16(block)));
    const int shift = 8 * (tig / 2) + 4 * (tig % 2);
    const __half2 bias = __float2half2_rn(-1025.0f);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const uint32_t x = load.u16(block + 2 + 2 * m) >> shift;
      const uint32_t pair = 0x64006400u | (x & 3u) | (((x >> 2) & 3u) << 16);
      const __half2 v = __hadd2(*reinterpret_cast<const __half2*>(&pair), bias);
      w[m] = *reinterpret_cast<const uint32_t*>(&v);
    }
  }
};
#endif

}  // namespace strata::cuda::fused_q10
