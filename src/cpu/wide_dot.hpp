// Exact integer span dots of the q10 profile: int16 weights (|w| <= 2048) against int16
// activation codes (|a| <= 511), one int32 per span of S values.
#pragma once
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace strata::cpu {

#if defined(__AVX2__)
// The eight int32 lanes of the partial products of `vectors` 16-value pieces starting at w, a:
// madd_epi16 multiplies pairs exactly and adds them in int32 (|w*a| <= 2^20, never saturates).
inline __m256i span_partials(const int16_t* w, const int16_t* a, int vectors) {
  __m256i acc = _mm256_setzero_si256();
  for (int v = 0; v < vectors; ++v) {
    const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16 * v));
    const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 16 * v));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(wv, av));
  }
  return acc;
}

// Eight 8-lane int32 vectors -> one vector of their eight totals (exact integer adds).
inline __m256i lane_totals(const __m256i* p /*[8]*/) {
  const __m256i x = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
  const __m256i y = _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(x, y, 0x20),
                          _mm256_permute2x128_si256(x, y, 0x31));
}
#endif

// isum[s] = sum_{i < span} w[span*s + i] * a[span*s + i] for s in [0, n_spans).
inline void span_dots(const int16_t* w, const int16_t* a, int64_t n_spans, int span,
                      int32_t* isum) {
  for (int64_t s = 0; s < n_spans; ++s) {
    int32_t sum = 0;
    for (int i = 0; i < span; ++i)
      sum += int32_t{w[span * s + i]} * int32_t{a[span * s + i]};
    isum[s] = sum;
  }
}

}  // namespace strata::cpu
