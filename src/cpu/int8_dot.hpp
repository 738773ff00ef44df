// Exact int8 dot products over 32-wide sub-blocks, split into 16-value halves (the k slice of
// every product in the library; see pipeline/arith.hpp for how the halves are folded).
#pragma once
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace strata::cpu {

// isum[2*s + h] = sum_{i in half h of sub s} w[32s + i] * a[32s + i] for s in [0, n_sub).
// w: [32 * n_sub] int8 weight codes (any int8, -128 included); a: [32 * n_sub] activation codes
// in [-127, 127] (the quantize_block32 clamp), which the AVX2 sign trick relies on.
inline void dot_halves(const int8_t* w, const int8_t* a, int n_sub, int32_t* isum) {
  int s = 0;
#if defined(__AVX2__)
  const __m256i ones = _mm256_set1_epi16(1);
  // Lanes 0..3 of the result cover bytes 0..15 (half 0), lanes 4..7 bytes 16..31 (half 1).
  const auto sub_dot = [&](int sub) {
    const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 * sub));
    const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32 * sub));
    // |w| as unsigned (-128 -> 128) times sign(w)*a as signed: each int16 pair sum is at most
    // 2 * 128 * 127 = 32512, so maddubs never saturates.
    const __m256i products = _mm256_maddubs_epi16(_mm256_abs_epi8(wv), _mm256_sign_epi8(av, wv));
    return _mm256_madd_epi16(products, ones);
  };
  const __m256i interleave = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (; s + 4 <= n_sub; s += 4) {
    const __m256i v01 = _mm256_hadd_epi32(sub_dot(s), sub_dot(s + 1));
    const __m256i v23 = _mm256_hadd_epi32(sub_dot(s + 2), sub_dot(s + 3));
    // [s0h0 s1h0 s2h0 s3h0 | s0h1 s1h1 s2h1 s3h1] -> [s0h0 s0h1 s1h0 s1h1 ...]
    const __m256i halves = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(v01, v23), interleave);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(isum + 2 * s), halves);
  }
#endif
  for (; s < n_sub; ++s) {
    for (int h = 0; h < 2; ++h) {
      int32_t sum = 0;
      for (int i = 0; i < 16; ++i)
        sum += int32_t{w[32 * s + 16 * h + i]} * int32_t{a[32 * s + 16 * h + i]};
      isum[2 * s + h] = sum;
    }
  }
}

}  // namespace strata::cpu
