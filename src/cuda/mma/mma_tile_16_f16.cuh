// fp16 16x16x16 tile primitive (nvcuda::wmma, sm_70+; HMMA.16816.F32 on sm_80 / sm_90):
//
//   acc[16 x 16] f32 += A[16 x 16] f16 (row-major, lda) * B[16 x 16] f16 (col-major, ldb)
//   store: acc -> c[16 x 16] f32 row-major, ld = 16
//
// The q10 counterpart of mma_tile_16.cuh's int8 Tile16 (the same index helpers,
// mma_tile_16_layout.hpp). A and B are plain tiles in shared memory; a, b must be 32-byte aligned
// and lda, ldb multiples of 8 (nvcuda::wmma's rule for f16). Exact for integer operands while every
// partial sum stays below 2^24 (span_mma.cuh holds the format-aware guard).
// NOTE: NVIDIA only so far; the gfx1100 backend (v_wmma_f32_16x16x16_f16) is still to be written.
#pragma once
#include <cuda_fp16.h>
#include <mma.h>

#include <cstdint>

#include "cuda/mma/mma_tile_16_layout.hpp"

namespace strata::mma {

struct Tile16F16Wmma {
  struct Acc {
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> f;
  };
  __device__ static void zero(Acc& acc) { nvcuda::wmma::fill_fragment(acc.f, 0.0f); }
  __device__ static void mma(Acc& acc, const __half* a, int lda, const __half* b, int ldb) {
    nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, __half, nvcuda::wmma::row_major> fa;
    nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, __half, nvcuda::wmma::col_major> fb;
    nvcuda::wmma::load_matrix_sync(fa, a, static_cast<unsigned>(lda));
    nvcuda::wmma::load_matrix_sync(fb, b, static_cast<unsigned>(ldb));
    nvcuda::wmma::mma_sync(acc.f, fa, fb, acc.f);
  }
  __device__ static void store(float* c, const Acc& acc) {
    nvcuda::wmma::store_matrix_sync(c, acc.f, kTile16, nvcuda::wmma::mem_row_major);
  }
};
using Tile16F16 = Tile16F16Wmma;

// The primitive: acc += A * B (one 16-wide k slice).
__device__ __forceinline__ void mma_tile_16_f16(
    Tile16F16::Acc& acc, const __half* a /*[16 x lda] f16 row-major*/, int lda,
    const __half* b /*[16 x ldb] f16, column n at b + n*ldb*/, int ldb) {
  Tile16F16::mma(acc, a, lda, b, ldb);
}

}  // namespace strata::mma
