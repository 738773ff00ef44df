// The q10 Hopper kernels' weight decode: one 32-value piece of a block as f16 integers, with the
// format's lookup table (if any) in shared memory or in registers. Device code;
// tests/gpu/hopper_q10_decode_test compares it with the traits' decode_wide on every bundled block
// of all 25 formats.
#pragma once
#include <cstdint>
#include <type_traits>

#include "common/hd.hpp"
#include "formats/format.hpp"
#include "formats/iq1_m.hpp"
#include "formats/iq1_s.hpp"
#include "formats/iq2_xs.hpp"
#include "formats/iq2_xxs.hpp"
#include "formats/iq3_s.hpp"
#include "formats/iq3_xxs.hpp"
#include "formats/iq4_nl.hpp"
#include "formats/iq4_xs.hpp"
#include "formats/mxfp4.hpp"
#include "formats/nvfp4.hpp"
#include "formats/q2_0.hpp"
#include "formats/q2_k.hpp"
#include "formats/q3_k.hpp"
#include "formats/q4_0.hpp"
#include "formats/q4_1.hpp"
#include "formats/q4_k.hpp"
#include "formats/q5_0.hpp"
#include "formats/q5_1.hpp"
#include "formats/q5_k.hpp"
#include "formats/q6_k.hpp"
#include "formats/q8_0.hpp"
#include "formats/tables.hpp"

#if defined(__CUDACC__)
#include <cuda_fp16.h>

#include "cuda/blocks/decoders.hpp"
#include "cuda/fused_q10/wide_piece.hpp"
#endif

namespace strata::cuda::fused_q10 {

// The formats whose decode_wide gives every span of a block the same scale, a function of the
// block's scale fields alone (the sub-scales fold into w). Where one fold batch holds all of a
// chunk's spans (HopperQ10Tile::kChunkScale), the consumers then form each scale product
// w_scale * a_scale once for the chunk: the same operation on the same operands as once per span.
// tests/unit/q10_wide_piece_test checks the property on every bundled block and on random bytes.
template <class F>
inline constexpr bool kWideBlockScale =
    std::is_same_v<F, Q4_K> || std::is_same_v<F, Iq3S> || std::is_same_v<F, Iq1S> || std::is_same_v<F, Iq1M>;

#if defined(__CUDACC__)
// fp16_bits_to_float without its branches: the hardware conversion, exact for every f16 but NaN,
// and NaN's bits as fp16_bits_to_float builds them (its payload shifted up), by a select. A branch
// in a piece's decode closes a convergence region around it, and the compiler then keeps a thread's
// pieces one after the other instead of interleaving their loads.
__device__ __forceinline__ float f16_bits_to_float_select(uint32_t bits) {
  const float converted = __half2float(__ushort_as_half(static_cast<unsigned short>(bits & 0xFFFFu)));
  const uint32_t nan = ((bits & 0x8000u) << 16) | 0x7F800000u | ((bits & 0x3FFu) << 13);
  return (bits & 0x7FFFu) > 0x7C00u ? __uint_as_float(nan) : converted;
}

// The f16 at p (2-byte aligned) as a float: one 16-bit load (load_fp16le reads byte by byte).
__device__ __forceinline__ float load_f16(const uint8_t* p) {
  return f16_bits_to_float_select(blocks::PlainLoad{}.u16(p));
}

// Four codes c (one per byte, each 0..255) as the f16 pairs (c0, c1) and (c2, c3) plus 1024: the
// bytes under the f16 bits 0x64.. (1024 + c exactly).
__device__ __forceinline__ void codes_under_1024(uint32_t codes, __half2& lo, __half2& hi) {
  const uint32_t l = __byte_perm(codes, 0x64646464u, 0x4140);
  const uint32_t h = __byte_perm(codes, 0x64646464u, 0x4342);
  lo = *reinterpret_cast<const __half2*>(&l);
  hi = *reinterpret_cast<const __half2*>(&h);
}

// Pairs 2i and 2i + 1 of a piece (values 4i .. 4i + 3, lower k in the low half).
__device__ __forceinline__ void put_f16_pairs(uint32_t (&h2)[16], int i, __half2 lo, __half2 hi) {
  h2[2 * i] = *reinterpret_cast<const uint32_t*>(&lo);
  h2[2 * i + 1] = *reinterpret_cast<const uint32_t*>(&hi);
}

// Four codes c (one per byte) as the f16 integers 1024 + c + bias, pairs 2i and 2i + 1: one HADD2
// per pair, exact where 1024 + c and the result are f16 integers (|result| <= 2048).
__device__ __forceinline__ void put_codes_plus(uint32_t (&h2)[16], int i, uint32_t codes, __half2 bias) {
  __half2 lo, hi;
  codes_under_1024(codes, lo, hi);
  put_f16_pairs(h2, i, __hadd2(lo, bias), __hadd2(hi, bias));
}

// The 32 bytes at p (at least 2-byte aligned; shared or global) as eight little-endian words:
// two 16-byte loads where p is 16-byte aligned (GGUF tensors and rows usually are), else 16-bit
// loads.
__device__ __forceinline__ void load_words8(const uint8_t* p, uint32_t (&w)[8]) {
  if ((reinterpret_cast<uintptr_t>(p) & 15u) == 0) {
    const uint4 a = *reinterpret_cast<const uint4*>(p);
    const uint4 b = *reinterpret_cast<const uint4*>(p + 16);
    w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
  } else {
    const blocks::PlainLoad load;
#pragma unroll
    for (int i = 0; i < 8; ++i) w[i] = load.u32(p + 4 * i);
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

// The decodes without a lookup table: one unused word for the kernels' shared table.
struct HalfPieceNoTable {
  static constexpr int kTableWords = 1;
  __device__ __forceinline__ static uint32_t table_word(int) { return 0u; }
};

// Generic: the piece from WidePiece<F> (a 64-value span's half, or one sub-block where that is a
// piece) or, for two 16-value spans that are the halves of one sub-block, WideSubPair<F> (one
// decode_sub); else decode_wide per span. Integers converted to f16 one by one (exact below 2^11).
template <class F>
struct HalfPiece : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[kPieceSpans<F>]) {
    constexpr int S = F::kWideSpan;
    if constexpr (S >= 32 || kWideSubPairs<F>) {
      int16_t w[32];
      if constexpr (S >= 32) WidePiece<F>::decode(block, p32 * 32 / S, (p32 * 32) % S / 32, w, s[0]);
      else WideSubPair<F>::decode(block, p32, w, s);
#pragma unroll
      for (int i = 0; i < 16; ++i) h2[i] = pack_f16_pair(w[2 * i], w[2 * i + 1]);
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

// The f16 sign bits of values v and v + 1 of a piece (v even; bit 15 and bit 31), from the piece's
// sign word shifted left by 7 - v % 8 and by 6 - v % 8 (`shifted[k]` = signs << k, so that bit 7 of
// byte b holds value 8b + 7 - k): prmt with the sign-replicate selectors of byte v / 8 of each,
// into bytes 1 and 3.
__device__ __forceinline__ uint32_t pair_sign_bits(const uint32_t (&shifted)[8], int v) {
  const uint32_t b = static_cast<uint32_t>(v / 8), r = static_cast<uint32_t>(v % 8);
  const uint32_t selector = ((0xCu + b) << 12) | ((0x8u + b) << 4);
  uint32_t bits;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(bits) : "r"(shifted[7 - r]), "r"(shifted[6 - r]), "r"(selector));
  return bits & 0x80008000u;
}

// Word k of a grid entry's f16 table: its magnitudes 2k and 2k + 1 (one per byte) as an f16 pair.
__device__ __forceinline__ uint32_t grid_f16_word(uint64_t magnitudes, int k) {
  return pack_f16_pair(static_cast<int16_t>((magnitudes >> (16 * k)) & 0xFFu),
                       static_cast<int16_t>((magnitudes >> (16 * k + 8)) & 0xFFu));
}

// Values v0 .. v0 + 7 of a piece (pairs v0 / 2 ..) from an 8-value grid entry of f16 magnitudes,
// the sign bits of `shifted` (pair_sign_bits) XORed on.
__device__ __forceinline__ void put_signed_grid8(uint32_t (&h2)[16], int v0, const uint4& g,
                                                 const uint32_t (&shifted)[8]) {
  h2[v0 / 2] = g.x ^ pair_sign_bits(shifted, v0);
  h2[v0 / 2 + 1] = g.y ^ pair_sign_bits(shifted, v0 + 2);
  h2[v0 / 2 + 2] = g.z ^ pair_sign_bits(shifted, v0 + 4);
  h2[v0 / 2 + 3] = g.w ^ pair_sign_bits(shifted, v0 + 6);
}

// IQ3_S: piece = sub-block p32, multiplier M = 1 + 2s, span scale d. The table is the grid
// itself, one word per entry (magnitudes 1..15, one per byte). Per group of four values: one
// 4-byte table load (a warp's random entries meet on fewer banks than 8-byte f16 entries do), the
// bytes under the f16 bits 0x64 (1024 + g), one HFMA2 per pair, (1024 + g) * M - 1024 * M =
// g * M <= 465, exact (one rounding of an exact f16 integer), then the sign bits XORed onto the
// f16 sign bits (pair_sign_bits: one prmt per pair, eight shifts per piece): decode_wide's
// integers. Each group's 9-bit grid index is one prmt (iq3s_index) of the qs byte and the group's
// qh bit, the piece's eight qh bits spread one per byte beforehand.
//
// The index of group k (0..3) of a word of four qs bytes: qs byte k | (qh byte k << 8), where
// qh_bytes holds each group's qh bit as a byte (0 or 1). The two upper bytes replicate the sign
// bit of qh byte 0 (prmt's msb mode, selector nibble 0xC), which is 0.
__device__ __forceinline__ uint32_t iq3s_index(uint32_t qs, uint32_t qh_bytes, int k) {
  const uint32_t selector = 0xCC00u | (static_cast<uint32_t>(4 + k) << 4) | static_cast<uint32_t>(k);
  uint32_t index;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(index) : "r"(qs), "r"(qh_bytes), "r"(selector));
  return index;
}

template <>
struct HalfPiece<Iq3S> {
  using Decoder = blocks::DeviceDecoder<Iq3S>;
  static constexpr int kTableWords = tables::k_iq3s_grid_size;
  __device__ __forceinline__ static uint32_t table_word(int i) {
    return static_cast<uint32_t>(tables::iq3s_grid(i));
  }
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* grid,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    const auto raw = Decoder::load_raw(block, p32, blocks::PlainLoad{});
    const int multiplier = Decoder::multiplier(raw);
    const __half2 m2 = __half2half2(__int2half_rn(multiplier));
    const __half2 bias = __half2half2(__int2half_rn(-1024 * multiplier));
    uint32_t shifted[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) shifted[k] = raw.signs << k;
    // The qh bits of groups 0-3 and 4-7 (meta bits 16-23), one per byte.
    const uint32_t qh = raw.meta >> 16;
    const uint32_t qh_bytes[2] = {((qh & 0xFu) * 0x00204081u) & 0x01010101u,
                                  (((qh >> 4) & 0xFu) * 0x00204081u) & 0x01010101u};
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const uint32_t index = iq3s_index(raw.qs[m / 4], qh_bytes[m / 4], m % 4);
      __half2 lo, hi;
      codes_under_1024(grid[index], lo, hi);
      lo = __hfma2(lo, m2, bias);
      hi = __hfma2(hi, m2, bias);
      h2[2 * m] = *reinterpret_cast<const uint32_t*>(&lo) ^ pair_sign_bits(shifted, 4 * m);
      h2[2 * m + 1] = *reinterpret_cast<const uint32_t*>(&hi) ^ pair_sign_bits(shifted, 4 * m + 2);
    }
    s[0].scale = f16_bits_to_float_select(raw.meta);
    s[0].offset = 0.0f;
  }
};

// Q2_0: piece = sub-block p32, w = code - 1, span scale d. Each byte's four 2-bit codes c spread
// to four bytes go under the f16 bits 0x64 (1024 + c), and one HADD2 per pair of -1025 leaves
// c - 1 exactly.
template <>
struct HalfPiece<Q2_0> : HalfPieceNoTable {
  using Decoder = blocks::DeviceDecoder<Q2_0>;
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    const auto raw = Decoder::load_raw(block, p32, blocks::PlainLoad{});
    s[0].scale = f16_bits_to_float_select(raw.d);
    s[0].offset = 0.0f;
    const __half2 bias = __float2half2_rn(-1025.0f);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t x = (raw.codes[i / 4] >> (8 * (i % 4))) & 0xFFu;
      put_codes_plus(h2, i, (x | (x << 6) | (x << 12) | (x << 18)) & 0x03030303u, bias);  // code j in byte j
    }
  }
};

// Q4_K: piece = sub-block = span p32. Codes q = 0..15 (a nibble of qs), w = q * sc with the 6-bit
// sub-block scale sc: one fused multiply-add per pair, (1024 + q) * sc - 1024 * sc = q * sc, exact
// (q * sc <= 945; 1024 * sc <= 64512 has 6 significant bits). Span scale d, offset -(dmin * m):
// decode_wide's expressions.
template <>
struct HalfPiece<Q4_K> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    int sc = 0, m = 0;
    k4_scale_min(block + Q4_K::kScalesOffset, p32, sc, m);
    s[0].scale = load_f16(block);
    s[0].offset = -(load_f16(block + 2) * static_cast<float>(m));
    uint32_t qs[8];
    load_words8(block + Q4_K::kQsOffset + 32 * (p32 / 2), qs);
    const int shift = 4 * (p32 % 2);
    const __half2 m2 = __half2half2(__int2half_rn(sc));
    const __half2 bias = __half2half2(__int2half_rn(-1024 * sc));
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      __half2 lo, hi;
      codes_under_1024((qs[i] >> shift) & 0x0F0F0F0Fu, lo, hi);
      put_f16_pairs(h2, i, __hfma2(lo, m2, bias), __hfma2(hi, m2, bias));
    }
  }
};

// Q5_K: piece = sub-block = span p32, w = q (0..31: a nibble of qs and bit p32 of qh), scale d * sc,
// offset -(dmin * m): decode_sub's expressions. One HADD2 per pair of -1024.
template <>
struct HalfPiece<Q5_K> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    int sc = 0, m = 0;
    k4_scale_min(block + Q5_K::kScalesOffset, p32, sc, m);
    s[0].scale = load_f16(block) * static_cast<float>(sc);
    s[0].offset = -(load_f16(block + 2) * static_cast<float>(m));
    uint32_t qs[8], qh[8];
    load_words8(block + Q5_K::kQsOffset + 32 * (p32 / 2), qs);
    load_words8(block + Q5_K::kQhOffset, qh);
    const int shift = 4 * (p32 % 2);
    const __half2 bias = __float2half2_rn(-1024.0f);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      put_codes_plus(h2, i, ((qs[i] >> shift) & 0x0F0F0F0Fu) | (((qh[i] >> p32) & 0x01010101u) << 4), bias);
  }
};

// Q2_K: piece = sub-block p32, two 16-value spans (split scales), w = q (0..3), scale d * (sc & 15),
// offset -(dmin * (sc >> 4)) per span: decode_sub's expressions.
template <>
struct HalfPiece<Q2_K> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[2]) {
    const float d = load_f16(block + Q2_K::kDOffset);
    const float dmin = load_f16(block + Q2_K::kDminOffset);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t packed = block[Q2_K::kScalesOffset + 2 * p32 + h];
      s[h].scale = d * static_cast<float>(packed & 0x0Fu);
      s[h].offset = -(dmin * static_cast<float>(packed >> 4));
    }
    uint32_t qs[8];
    load_words8(block + Q2_K::kQsOffset + 32 * (p32 / 4), qs);
    const int shift = 2 * (p32 % 4);
    const __half2 bias = __float2half2_rn(-1024.0f);
#pragma unroll
    for (int i = 0; i < 8; ++i) put_codes_plus(h2, i, (qs[i] >> shift) & 0x03030303u, bias);
  }
};

// Q3_K: piece = sub-block p32, two 16-value spans, w = low 2 bits + 4 * the hmask bit - 4 (-4..3),
// scale d * sc per span (Q3_K::scale): decode_sub's expressions.
template <>
struct HalfPiece<Q3_K> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[2]) {
    const float d = load_f16(block + Q3_K::kDOffset);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      s[h].scale = d * static_cast<float>(Q3_K::scale(block, 2 * p32 + h));
      s[h].offset = 0.0f;
    }
    uint32_t qs[8], hmask[8];
    load_words8(block + Q3_K::kQsOffset + 32 * (p32 / 4), qs);
    load_words8(block + Q3_K::kHmaskOffset, hmask);
    const int shift = 2 * (p32 % 4);
    const __half2 bias = __float2half2_rn(-1028.0f);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      put_codes_plus(h2, i, ((qs[i] >> shift) & 0x03030303u) | (((hmask[i] >> p32) & 0x01010101u) << 2), bias);
  }
};

// Q6_K: piece = sub-block p32 = 4n + k, two 16-value spans. Codes q + 32 = low nibble | 2 high
// bits << 4 (0..63), w = (1024 + q + 32) - 1056 = q exactly. Span scales d * sc (the int8 scales
// 2 p32 and 2 p32 + 1), decode_sub's expression.
template <>
struct HalfPiece<Q6_K> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[2]) {
    const blocks::PlainLoad load;
    const float d = load_f16(block + Q6_K::kDOffset);
    const uint32_t scales = load.u16(block + Q6_K::kScalesOffset + 2 * p32);  // the two int8 scales
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      s[h].scale = d * static_cast<float>(static_cast<int8_t>((scales >> (8 * h)) & 0xFFu));
      s[h].offset = 0.0f;
    }
    const int n = p32 / 4, k = p32 % 4;
    uint32_t ql[8], qh[8];
    load_words8(block + Q6_K::kQlOffset + 64 * n + 32 * (k % 2), ql);
    load_words8(block + Q6_K::kQhOffset + 32 * n, qh);
    const int low_shift = 4 * (k / 2), high_shift = 2 * k;
    const __half2 bias = __float2half2_rn(-1056.0f);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      put_codes_plus(h2, i, ((ql[i] >> low_shift) & 0x0F0F0F0Fu) | (((qh[i] >> high_shift) & 0x03030303u) << 4),
                     bias);
    }
  }
};

// IQ2_XXS's sign bytes are the 7 stored bits and their parity (ksigns_iq2xs), so the decode
// computes them.
constexpr bool ksigns_are_parity() {
  for (int i = 0; i < tables::k_ksigns_iq2xs_size; ++i) {
    int ones = 0;
    for (int b = 0; b < 7; ++b) ones += (i >> b) & 1;
    if (tables::host_ksigns_iq2xs[i] != (i | ((ones & 1) << 7))) return false;
  }
  return true;
}
static_assert(ksigns_are_parity(), "ksigns_iq2xs: 7 sign bits and their parity");

// The sign word of a sub-block of IQ2_XXS / IQ3_XXS (four 7-bit fields in the low 28 bits of w,
// each with its parity as the eighth sign; bit v: value v negative), shifted left by 0..7 for
// pair_sign_bits.
__device__ __forceinline__ void iq2_sign_words(uint32_t w, uint32_t (&shifted)[8]) {
  uint32_t signs = 0;
#pragma unroll
  for (int l = 0; l < 4; ++l) {
    const uint32_t bits = (w >> (7 * l)) & 127u;
    signs |= (bits | ((__popc(bits) & 1u) << 7)) << (8 * l);
  }
#pragma unroll
  for (int k = 0; k < 8; ++k) shifted[k] = signs << k;
}

// IQ2_XXS: piece = sub-block = span p32, w = +-magnitude (8, 25, 43), scale d * (0.5 + s) * 0.25
// (decode_sub's expression). The table is the grid as f16 magnitudes (entry e = words 4e .. 4e + 3,
// the pairs of its values 0..7): one 16-byte load per 8 values, the sign bits XORed onto the f16
// sign bits (pair_sign_bits), exact.
template <>
struct HalfPiece<Iq2Xxs> {
  static constexpr int kTableWords = 4 * tables::k_iq2xxs_grid_size;
  __device__ __forceinline__ static uint32_t table_word(int i) {
    return grid_f16_word(tables::iq2xxs_grid(i / 4), i % 4);  // magnitudes one per byte
  }
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* grid,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    const blocks::PlainLoad load;
    const uint8_t* chunk = block + 2 + 8 * p32;
    const uint32_t indices = load.u32(chunk), w = load.u32(chunk + 4);
    const float d = load_f16(block);
    s[0].scale = d * (0.5f + static_cast<float>(w >> 28)) * 0.25f;
    s[0].offset = 0.0f;
    uint32_t shifted[8];
    iq2_sign_words(w, shifted);
    const uint4* grid4 = reinterpret_cast<const uint4*>(grid);
#pragma unroll
    for (int l = 0; l < 4; ++l) {
      put_signed_grid8(h2, 8 * l, grid4[(indices >> (8 * l)) & 0xFFu], shifted);
    }
  }
};

// IQ3_XXS: piece = sub-block = span p32, w = +-magnitude (4..62), scale d * (0.5 + s) * 0.5
// (decode_sub's). The table is the grid as f16 magnitudes (entry e = words 2e, 2e + 1): one 8-byte
// load per 4 values, the signs as for IQ2_XXS.
template <>
struct HalfPiece<Iq3Xxs> {
  static constexpr int kTableWords = 2 * tables::k_iq3xxs_grid_size;
  __device__ __forceinline__ static uint32_t table_word(int i) {
    return grid_f16_word(tables::iq3xxs_grid(i / 2), i % 2);  // magnitudes one per byte
  }
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* grid,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    const blocks::PlainLoad load;
    const uint32_t w = load.u32(block + Iq3Xxs::kSignsOffset + 4 * p32);
    const float d = load_f16(block);
    s[0].scale = d * (0.5f + static_cast<float>(w >> 28)) * 0.5f;
    s[0].offset = 0.0f;
    const uint8_t* qs = block + Iq3Xxs::kQsOffset + 8 * p32;
    const uint32_t indices[2] = {load.u32(qs), load.u32(qs + 4)};
    uint32_t shifted[8];
    iq2_sign_words(w, shifted);
    const uint2* grid2 = reinterpret_cast<const uint2*>(grid);
#pragma unroll
    for (int m = 0; m < 8; ++m) {  // values 4m .. 4m + 3
      const uint2 g = grid2[(indices[m / 4] >> (8 * (m % 4))) & 0xFFu];
      h2[2 * m] = g.x ^ pair_sign_bits(shifted, 4 * m);
      h2[2 * m + 1] = g.y ^ pair_sign_bits(shifted, 4 * m + 2);
    }
  }
};

// IQ2_XS: piece = sub-block p32, two 16-value spans with scales d * (0.5 + s) * 0.25 (the two
// nibbles of its scale byte; decode_sub's). Per group of 8 values a 16-bit entry: 9-bit grid index
// and a 7-bit sign field (its parity the eighth sign). The table is the grid as f16 magnitudes
// (entry e = words 4e .. 4e + 3).
template <>
struct HalfPiece<Iq2Xs> {
  static constexpr int kTableWords = 4 * tables::k_iq2xs_grid_size;
  __device__ __forceinline__ static uint32_t table_word(int i) {
    return grid_f16_word(tables::iq2xs_grid(i / 4), i % 4);  // magnitudes one per byte
  }
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* grid,
                                                uint32_t (&h2)[16], WideScale (&s)[2]) {
    const blocks::PlainLoad load;
    const float d = load_f16(block);
    const uint32_t scales = block[Iq2Xs::kScalesOffset + p32];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      s[h].scale = d * (0.5f + static_cast<float>((scales >> (4 * h)) & 0x0Fu)) * 0.25f;
      s[h].offset = 0.0f;
    }
    const uint8_t* qs = block + Iq2Xs::kQsOffset + 8 * p32;
    const uint32_t packed[2] = {load.u32(qs), load.u32(qs + 4)};  // entries 2j (low half), 2j + 1
    uint32_t sign_fields = 0;  // the four 7-bit sign fields, as IQ2_XXS packs them
#pragma unroll
    for (int l = 0; l < 4; ++l) sign_fields |= ((packed[l / 2] >> (16 * (l % 2) + 9)) & 127u) << (7 * l);
    uint32_t shifted[8];
    iq2_sign_words(sign_fields, shifted);
    const uint4* grid4 = reinterpret_cast<const uint4*>(grid);
#pragma unroll
    for (int l = 0; l < 4; ++l) {
      put_signed_grid8(h2, 8 * l, grid4[(packed[l / 2] >> (16 * (l % 2))) & 511u], shifted);
    }
  }
};

// ---- the nibble and byte formats: IQ4_NL, IQ4_XS, MXFP4, NVFP4, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 --
// The 16 codebook values + 128 (1..255: kvalues are -127..113, MXFP4's -12..12) as four words, byte
// i = entry i: the register table of the lookup below.
template <const int8_t (&Values)[16]>
struct BiasedCodebook {
  static constexpr uint32_t word(int w) {
    uint32_t v = 0;
    for (int b = 3; b >= 0; --b) v = (v << 8) | static_cast<uint32_t>(Values[4 * w + b] + 128);
    return v;
  }
  static constexpr uint32_t kWords[4] = {word(0), word(1), word(2), word(3)};
};

// The 16 bytes at p (any alignment; shared or global) as four little-endian words: the four
// aligned 32-bit words from p's and funnel shifts (MXFP4's 17-byte blocks leave odd addresses).
// Past those words only the bytes the 16 reach are read (none where p is 4-byte aligned): a whole
// fifth word could lie past the tensor's end, in global memory across the end of a mapping.
__device__ __forceinline__ void load_words4_any(const uint8_t* p, uint32_t (&w)[4]) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  const uint32_t* aligned = reinterpret_cast<const uint32_t*>(at & ~uintptr_t{3});
  const uint32_t skew = static_cast<uint32_t>(at & 3u);
  uint32_t a[5];
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = aligned[i];
  const uint8_t* tail = reinterpret_cast<const uint8_t*>(aligned + 4);
  a[4] = skew >= 1 ? static_cast<uint32_t>(tail[0]) : 0u;
  if (skew >= 2) a[4] |= static_cast<uint32_t>(tail[1]) << 8;
  if (skew >= 3) a[4] |= static_cast<uint32_t>(tail[2]) << 16;
#pragma unroll
  for (int i = 0; i < 4; ++i) w[i] = __funnelshift_r(a[i], a[i + 1], 8u * skew);
}

// The biased codebook bytes of a word of eight nibble codes through a register table: two prmt
// over the table's halves (the nibbles' low 3 bits select; __byte_perm ignores the selector's
// fourth bit) and one by the fourth bit. `lows`: the bytes of the low nibbles (bytes 0..3 of the
// word, in order), `highs`: of the high nibbles.
template <class Codebook>
__device__ __forceinline__ void codebook_bytes(uint32_t q, uint32_t& lows, uint32_t& highs) {
  const uint32_t pick_high = 0x32103210u | ((q & 0x88888888u) >> 1);
  uint32_t bytes[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const uint32_t sel = q >> (16 * half);
    const uint32_t low = __byte_perm(Codebook::kWords[0], Codebook::kWords[1], sel);
    const uint32_t high = __byte_perm(Codebook::kWords[2], Codebook::kWords[3], sel);
    bytes[half] = __byte_perm(low, high, pick_high >> (16 * half));
  }
  // Nibbles in order: bytes[0] = byte 0 lo, byte 0 hi, byte 1 lo, byte 1 hi; bytes[1] bytes 2, 3.
  lows = __byte_perm(bytes[0], bytes[1], 0x6420);
  highs = __byte_perm(bytes[0], bytes[1], 0x7531);
}

// Where code word i (bytes 4i .. 4i + 3) of a piece's 16 nibble bytes goes, in quads of values:
// the bytes come in groups of kHigh whose low nibbles are kHigh values and high nibbles the next
// kHigh (IQ4_NL / IQ4_XS / MXFP4 / Q4 / Q5: one group of 16; NVFP4: groups of 8).
template <int kHigh>
constexpr int low_quad(int i) {
  return (4 * i / kHigh) * (kHigh / 2) + (4 * i % kHigh) / 4;
}

// A piece of 16 nibble bytes through a codebook (+ 128), bias -1152.
template <class Codebook, int kHigh>
__device__ __forceinline__ void decode_codebook_piece(const uint8_t* qs, uint32_t (&h2)[16]) {
  uint32_t q[4];
  load_words4_any(qs, q);
  const __half2 bias = __float2half2_rn(-1152.0f);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    uint32_t lows, highs;
    codebook_bytes<Codebook>(q[i], lows, highs);
    put_codes_plus(h2, low_quad<kHigh>(i), lows, bias);
    put_codes_plus(h2, low_quad<kHigh>(i) + kHigh / 4, highs, bias);
  }
}

// Bits 4 i .. 4 i + 3 of `bits` as bit 4 of bytes 0..3 (the fifth bits of Q5_0 / Q5_1 codes).
__device__ __forceinline__ uint32_t fifth_bits(uint32_t bits, int i) {
  return ((((bits >> (4 * i)) & 0xFu) * 0x00204081u) & 0x01010101u) << 4;
}

// A piece of 16 bytes of plain 4-bit codes (low nibble value j, high nibble value j + 16), with
// the fifth bits in `qh` (bit j: value j) where kFive, as 1024 + code + bias.
template <bool kFive>
__device__ __forceinline__ void decode_nibble_piece(const uint8_t* qs, uint32_t qh, float bias_value,
                                                    uint32_t (&h2)[16]) {
  uint32_t q[4];
  load_words4_any(qs, q);
  const __half2 bias = __float2half2_rn(bias_value);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    uint32_t lows = q[i] & 0x0F0F0F0Fu, highs = (q[i] >> 4) & 0x0F0F0F0Fu;
    if constexpr (kFive) {
      lows |= fifth_bits(qh, i);
      highs |= fifth_bits(qh >> 16, i);
    }
    put_codes_plus(h2, i, lows, bias);
    put_codes_plus(h2, 4 + i, highs, bias);
  }
}

// Q8_0: the block is the piece and the span (S = 32), w = q, scale d: each int8 code + 128 (the
// sign bit flipped) under the f16 bits 0x64, one HADD2 of -1152 per pair.
template <>
struct HalfPiece<Q8_0> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int /*p32*/, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    s[0].scale = load_f16(block);
    s[0].offset = 0.0f;
    const __half2 bias = __float2half2_rn(-1152.0f);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      uint32_t q[4];
      load_words4_any(block + 2 + 16 * half, q);
#pragma unroll
      for (int i = 0; i < 4; ++i) put_codes_plus(h2, 4 * half + i, q[i] ^ 0x80808080u, bias);
    }
  }
};

// Q4_0 / Q4_1 / Q5_0 / Q5_1: the block is the piece and the span (S = 32); scale d, offset m
// (Q4_1, Q5_1), w = q - 8 / q / q - 16 / q: decode_sub's.
template <>
struct HalfPiece<Q4_0> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int /*p32*/, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    s[0].scale = load_f16(block);
    s[0].offset = 0.0f;
    decode_nibble_piece<false>(block + 2, 0u, -1032.0f, h2);
  }
};

template <>
struct HalfPiece<Q4_1> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int /*p32*/, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    s[0].scale = load_f16(block);
    s[0].offset = load_f16(block + 2);
    decode_nibble_piece<false>(block + 4, 0u, -1024.0f, h2);
  }
};

template <>
struct HalfPiece<Q5_0> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int /*p32*/, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    const blocks::PlainLoad load;
    s[0].scale = load_f16(block);
    s[0].offset = 0.0f;
    decode_nibble_piece<true>(block + 6, load.u32(block + 2), -1040.0f, h2);
  }
};

template <>
struct HalfPiece<Q5_1> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int /*p32*/, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    const blocks::PlainLoad load;
    s[0].scale = load_f16(block);
    s[0].offset = load_f16(block + 2);
    decode_nibble_piece<true>(block + 8, load.u32(block + 4), -1024.0f, h2);
  }
};

// NVFP4: piece p32 = groups 2 p32, 2 p32 + 1 of 16 values (8 bytes each: low nibbles values 0..7,
// high 8..15), two 16-value spans with the groups' UE4M3 scales halved (decode_sub's).
template <>
struct HalfPiece<Nvfp4> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      s[h].scale = ue4m3_half_to_float(block[2 * p32 + h]);
      s[h].offset = 0.0f;
    }
    decode_codebook_piece<BiasedCodebook<tables::host_kvalues_mxfp4>, 8>(block + Nvfp4::kQsOffset + 16 * p32, h2);
  }
};

// IQ4_NL: the block is the piece and the span (S = 32), scale d.
template <>
struct HalfPiece<Iq4Nl> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int /*p32*/, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    s[0].scale = load_f16(block);
    s[0].offset = 0.0f;
    decode_codebook_piece<BiasedCodebook<tables::host_kvalues_iq4nl>, 16>(block + 2, h2);
  }
};

// IQ4_XS: piece = sub-block = span p32, scale d * (ls - 32): decode_sub's expression.
template <>
struct HalfPiece<Iq4Xs> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int p32, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    const blocks::PlainLoad load;
    const uint32_t scales_h = load.u16(block + Iq4Xs::kScalesHOffset);
    const int low = (block[Iq4Xs::kScalesLOffset + p32 / 2] >> (4 * (p32 % 2))) & 0x0F;
    const int ls = low | static_cast<int>(((scales_h >> (2 * p32)) & 3u) << 4);
    s[0].scale = load_f16(block) * static_cast<float>(ls - 32);
    s[0].offset = 0.0f;
    decode_codebook_piece<BiasedCodebook<tables::host_kvalues_iq4nl>, 16>(block + Iq4Xs::kQsOffset + 16 * p32, h2);
  }
};

// MXFP4: the block is the piece and the span, scale the E8M0 exponent halved (decode_sub's).
template <>
struct HalfPiece<Mxfp4> : HalfPieceNoTable {
  __device__ __forceinline__ static void decode(const uint8_t* block, int /*p32*/, const uint32_t* /*table*/,
                                                uint32_t (&h2)[16], WideScale (&s)[1]) {
    s[0].scale = e8m0_half_to_float(block[0]);
    s[0].offset = 0.0f;
    decode_codebook_piece<BiasedCodebook<tables::host_kvalues_mxfp4>, 16>(block + 1, h2);
  }
};
#endif

}  // namespace strata::cuda::fused_q10
