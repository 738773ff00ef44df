// Memory layout of the 16x16x16 int8 tile product (mma_tile_16.cuh), for host and device.
//
//   C[16 x 16] s32 (+)= A[16 x 16] s8 * B[16 x 16] s8
//   A: row-major, element (m, k) at a[m * lda + k]       (weight rows x k, k contiguous)
//   B: col-major, element (k, n) at b[n * ldb + k]       (k x pairs, one pair's k contiguous)
//   C: row-major with ld = N = 16, element (m, n) at c[m * 16 + n]
// The kernels write their shared tiles and read the stored accumulator through these helpers
// only, and tile_product_host below is the same product on the host with the same helpers, so
// the CPU trap tests check the indexing the kernels use.
#pragma once
#include <cstdint>

#include "common/hd.hpp"

namespace strata::mma {

inline constexpr int kTile16 = 16;  // M = N = K of one tile product
inline constexpr int kTile16Elems = kTile16 * kTile16;

STRATA_HD_INLINE int a_index(int m, int k, int lda) {
  return m * lda + k;
}
STRATA_HD_INLINE int b_index(int k, int n, int ldb) {
  return n * ldb + k;
}
STRATA_HD_INLINE int c_index(int m, int n) {
  return m * kTile16 + n;
}

// Which accumulator element a lane owns when it reads the stored tile back: element
// e = lane + 32 * i (i = 0..7) is row e / 16, column e % 16, so a wave's 32 lanes read 32
// consecutive int32 for each i.
STRATA_HD_INLINE int owned_row(int lane, int i) {
  return (lane + 32 * i) / kTile16;
}
STRATA_HD_INLINE int owned_col(int lane, int i) {
  return (lane + 32 * i) % kTile16;
}
inline constexpr int kOwnedPerLane = kTile16Elems / 32;

// The mistakes a test may ask for; the kernels only ever use kNone.
enum class TileFault {
  kNone,
  kBRowMajor,  // reads B as row-major: (k, n) at b[k * ldb + n]
  kCColMajor,  // stores C column-major: (m, n) at c[n * 16 + m]
};

// C (+)= A * B on the host, int32 exact, through the helpers above.
template <TileFault Fault = TileFault::kNone>
inline void tile_product_host(const int8_t* a, int lda, const int8_t* b, int ldb,
                              int32_t* c /*[256]*/) {
  for (int m = 0; m < kTile16; ++m)
    for (int n = 0; n < kTile16; ++n) {
      int32_t dot = 0;
      for (int k = 0; k < kTile16; ++k) {
        const int bi = (Fault == TileFault::kBRowMajor) ? k * ldb + n : b_index(k, n, ldb);
        dot += static_cast<int32_t>(a[a_index(m, k, lda)]) * static_cast<int32_t>(b[bi]);
      }
      const int ci = (Fault == TileFault::kCColMajor) ? n * kTile16 + m : c_index(m, n);
      c[ci] += dot;
    }
}

}  // namespace strata::mma
