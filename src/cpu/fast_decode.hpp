// CPU decode of one sub-block to int8 codes + scales. Generic formats use their traits'
// decode_sub; the hot formats of the MoE case get an AVX2 path that must give the same bytes
// (cpu_tile_test compares them on random blocks).
#pragma once
#include <cstdint>

#include "formats/format.hpp"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace strata::cpu {

template <class F>
struct SubDecoder {
  static void decode(const uint8_t* block, int sub, int8_t* q /*[32]*/, SubScale& s) {
    F::decode_sub(block, sub, q, s);
  }
};

#if defined(__AVX2__)
// IQ3_S: eight grid lookups give the magnitudes; the 32 sign bits expand to a byte mask and
// negate with (m ^ mask) - mask.
template <>
struct SubDecoder<Iq3S> {
  static void decode(const uint8_t* block, int sub, int8_t* q, SubScale& s) {
    const float scale = load_fp16le(block) * static_cast<float>(Iq3S::sub_scale(block, sub));
    s.scale[0] = s.scale[1] = scale;
    s.offset[0] = s.offset[1] = 0.0f;
    const __m256i magnitudes =
        _mm256_setr_epi32(static_cast<int>(Iq3S::group_magnitudes(block, sub, 0)),
                          static_cast<int>(Iq3S::group_magnitudes(block, sub, 1)),
                          static_cast<int>(Iq3S::group_magnitudes(block, sub, 2)),
                          static_cast<int>(Iq3S::group_magnitudes(block, sub, 3)),
                          static_cast<int>(Iq3S::group_magnitudes(block, sub, 4)),
                          static_cast<int>(Iq3S::group_magnitudes(block, sub, 5)),
                          static_cast<int>(Iq3S::group_magnitudes(block, sub, 6)),
                          static_cast<int>(Iq3S::group_magnitudes(block, sub, 7)));
    // Value i's sign is bit i of the little-endian word at signs + 4*sub.
    const uint32_t sign_bits = load_u32le(block + Iq3S::kSignsOffset + 4 * sub);
    const __m256i spread =
        _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(sign_bits)),
                            _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2,
                                             2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    const __m256i mask = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    const __m256i codes = _mm256_sub_epi8(_mm256_xor_si256(magnitudes, mask), mask);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), codes);
  }
};

// Q2_0: byte i/4 to position i, then the 2-bit field at 2*(i%4) picked by four shifted copies.
template <>
struct SubDecoder<Q2_0> {
  static void decode(const uint8_t* block, int sub, int8_t* q, SubScale& s) {
    const float d = load_fp16le(block);
    s.scale[0] = s.scale[1] = d;
    s.offset[0] = s.offset[1] = 0.0f;
    uint64_t packed = 0;
    for (int i = 0; i < 8; ++i) packed |= static_cast<uint64_t>(block[2 + 8 * sub + i]) << (8 * i);
    // Both 128-bit lanes hold the 8 code bytes; lane 1 reads bytes 4..7.
    const __m256i spread =
        _mm256_shuffle_epi8(_mm256_set1_epi64x(static_cast<long long>(packed)),
                            _mm256_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4,
                                             4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7));
    // NOTE: a 16-bit shift by <= 6 keeps bits 0..1 of every byte inside that byte.
    const __m256i field0 = _mm256_set1_epi32(0x00000003), field1 = _mm256_set1_epi32(0x00000300);
    const __m256i field2 = _mm256_set1_epi32(0x00030000), field3 = _mm256_set1_epi32(0x03000000);
    const __m256i codes =
        _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(spread, field0),
                                        _mm256_and_si256(_mm256_srli_epi16(spread, 2), field1)),
                        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(spread, 4), field2),
                                        _mm256_and_si256(_mm256_srli_epi16(spread, 6), field3)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), _mm256_sub_epi8(codes, _mm256_set1_epi8(1)));
  }
};
#endif

}  // namespace strata::cpu
