// fp16 16x16x16 tile primitive, one source for CUDA and HIP:
//
//   acc[16 x 16] f32 += A[16 x 16] f16 (row-major, lda) * B[16 x 16] f16 (col-major, ldb)
//   store: acc -> c[16 x 16] f32 row-major, ld = 16
//
// The q10 counterpart of mma_tile_16.cuh's int8 Tile16 (the same index helpers,
// mma_tile_16_layout.hpp). A and B are plain tiles in shared memory; a, b must be 32-byte aligned
// and lda, ldb multiples of 8 (nvcuda::wmma's rule for f16). Exact for integer operands while every
// partial sum stays below 2^24 (span_mma.cuh holds the format-aware guard). The backend is chosen
// once, as the policy type Tile16F16:
//   - nvcc: nvcuda::wmma, fragment<matrix_a,16,16,16,__half,row_major>, matrix_b col_major,
//     accumulator float (HMMA.16816.F32 on sm_80 / sm_90);
//   - HIP (gfx11, wave32): __builtin_amdgcn_wmma_f32_16x16x16_f16_w32 on registers loaded by hand.
//
// gfx11 (RDNA3) wave32 operand layout of V_WMMA_F32_16X16X16_F16 -- the int8 instruction's with
// one 16-bit element per value (sources cited in mma_tile_16.cuh):
//   A: lane l holds row l % 16 of A, all 16 k, as a v16f16 (k in element k); lanes 16-31 replicate.
//   B: lane l holds column l % 16 of B, all 16 k, the same way; lanes 16-31 replicate.
//   C/D (v8f32): element v of lane l is row 2 * v + l / 16, column l % 16.
// NOTE: the HIP path is compiled for gfx1100 (STRATA_MOE_HIP_CHECK) but has not been run on AMD
// hardware.
#pragma once
#include <cstdint>

#include "cuda/mma/mma_tile_16_layout.hpp"
#include "hip/portability.hpp"

#if !defined(__HIP__)
#include <cuda_fp16.h>
#include <mma.h>
#endif

namespace strata::mma {

#if defined(__HIP__)

using Half = _Float16;  // the f16 element of the tiles

struct Tile16F16Gfx11 {
  typedef _Float16 v16f16 __attribute__((ext_vector_type(16)));
  typedef float v8f32 __attribute__((ext_vector_type(8)));
  struct Acc {
    v8f32 v;
  };
  __device__ static void zero(Acc& acc) { acc.v = v8f32{0, 0, 0, 0, 0, 0, 0, 0}; }
  // 16 contiguous f16 (one row of A or one column of B), 16-byte aligned.
  __device__ static v16f16 load16(const Half* p) {
    v16f16 r;
    __builtin_memcpy(&r, p, sizeof r);
    return r;
  }
  __device__ static void mma(Acc& acc, const Half* a, int lda, const Half* b, int ldb) {
    const int lane = gpu::lane_id() % kTile16;
    const v16f16 a_row = load16(a + a_index(lane, 0, lda));  // row `lane` of A, k = 0..15
    const v16f16 b_col = load16(b + b_index(0, lane, ldb));  // column `lane` of B, k = 0..15
    acc.v = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a_row, b_col, acc.v);
  }
  __device__ static void store(float* c, const Acc& acc) {
    const int lane = gpu::lane_id();
#pragma unroll
    for (int v = 0; v < 8; ++v) c[c_index(2 * v + lane / 16, lane % 16)] = acc.v[v];
  }
};
using Tile16F16 = Tile16F16Gfx11;

// The f16 bits of an integer |v| <= 2048 (exact).
__device__ __forceinline__ uint16_t f16_bits_of_int(int v) {
  return __builtin_bit_cast(uint16_t, static_cast<_Float16>(v));
}

#else

using Half = __half;  // the f16 element of the tiles

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

// The f16 bits of an integer |v| <= 2048 (exact).
__device__ __forceinline__ uint16_t f16_bits_of_int(int v) {
  return __half_as_ushort(__int2half_rn(v));
}

#endif

// The primitive: acc += A * B (one 16-wide k slice).
__device__ __forceinline__ void mma_tile_16_f16(
    Tile16F16::Acc& acc, const Half* a /*[16 x lda] f16 row-major*/, int lda,
    const Half* b /*[16 x ldb] f16, column n at b + n*ldb*/, int ldb) {
  Tile16F16::mma(acc, a, lda, b, ldb);
}

}  // namespace strata::mma
