// int8 tensor-core primitive, one source for CUDA and HIP:
//
//   acc[16 x 16] s32 += A[16 x 16] s8 (row-major, lda) * B[16 x 16] s8 (col-major, ldb)
//   store: acc -> c[16 x 16] s32 row-major, ld = 16
//
// (layout and index helpers: mma_tile_16_layout.hpp). A and B are plain, unswizzled tiles in
// shared memory; a, b must be 32-byte aligned and lda, ldb multiples of 16 (nvcuda::wmma's rule).
// The backend is chosen once, as the policy type Tile16:
//   - nvcc: nvcuda::wmma, fragment<matrix_a,16,16,16,signed char,row_major>, matrix_b col_major,
//     accumulator int (IMMA.16816.S8.S8 on sm_80 / sm_90);
//   - HIP with rocWMMA (STRATA_MOE_HAVE_ROCWMMA): the same three rocwmma fragments;
//   - HIP without it (gfx11, wave32): __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32 on registers
//     loaded by hand, operand layout below.
//
// gfx11 (RDNA3) wave32 operand layout of V_WMMA_I32_16X16X16_IU8, as documented publicly:
//   A: lane l holds row l % 16 of A, all 16 k, as a v4i32 (k in byte k % 4 of dword k / 4);
//      lanes 16-31 hold the same data as lanes 0-15.
//   B: lane l holds column l % 16 of B, all 16 k, packed the same way; lanes 16-31 replicate.
//   C/D (v8i32): element v of lane l is row 2 * v + l / 16, column l % 16.
// Sources: AMD GPUOpen, "How to accelerate AI applications on RDNA 3 using WMMA"
// (https://gpuopen.com/learn/wmma_on_rdna3/, which defers to the RDNA3 ISA guide and AMD's Matrix
// Instruction Calculator for the register maps); Modular's RDNA WMMA kernel docs
// (https://docs.modular.com/max/api/kernels/nn/attention/gpu/amd_rdna/buffers/: "A/B per lane =
// 16 elements (full K; lanes 0-15 unique, 16-31 replicate) ... lane l, elem v -> D[row = 2v +
// l//16, col = l%16]"); ROCm/FlyDSL PR #485 (checked on gfx1151 hardware: "lane n, val v -> M =
// 2*v + n/16" for the f32/i32 accumulator).
// NOTE: the HIP paths are compiled for gfx1100 (STRATA_MOE_HIP_CHECK) but have not been run on
// AMD hardware.
#pragma once
#include <cstdint>

#include "cuda/mma/mma_tile_16_layout.hpp"
#include "hip/portability.hpp"

#if defined(__HIP__) && defined(STRATA_MOE_HAVE_ROCWMMA)
#include <rocwmma/rocwmma.hpp>
#elif !defined(__HIP__)
#include <mma.h>
#endif

namespace strata::mma {

#if defined(__HIP__) && defined(STRATA_MOE_HAVE_ROCWMMA)

struct Tile16RocWmma {
  struct Acc {
    rocwmma::fragment<rocwmma::accumulator, 16, 16, 16, int32_t> f;
  };
  __device__ static void zero(Acc& acc) { rocwmma::fill_fragment(acc.f, 0); }
  __device__ static void mma(Acc& acc, const int8_t* a, int lda, const int8_t* b, int ldb) {
    rocwmma::fragment<rocwmma::matrix_a, 16, 16, 16, int8_t, rocwmma::row_major> fa;
    rocwmma::fragment<rocwmma::matrix_b, 16, 16, 16, int8_t, rocwmma::col_major> fb;
    rocwmma::load_matrix_sync(fa, a, lda);
    rocwmma::load_matrix_sync(fb, b, ldb);
    rocwmma::mma_sync(acc.f, fa, fb, acc.f);
  }
  __device__ static void store(int32_t* c, const Acc& acc) {
    rocwmma::store_matrix_sync(c, acc.f, kTile16, rocwmma::mem_row_major);
  }
};
using Tile16 = Tile16RocWmma;

#elif defined(__HIP__)

struct Tile16Gfx11 {
  typedef int v4i32 __attribute__((ext_vector_type(4)));
  typedef int v8i32 __attribute__((ext_vector_type(8)));
  struct Acc {
    v8i32 v;
  };
  __device__ static void zero(Acc& acc) { acc.v = v8i32{0, 0, 0, 0, 0, 0, 0, 0}; }
  // 16 contiguous int8 (one row of A or one column of B), 16-byte aligned.
  __device__ static v4i32 load16(const int8_t* p) {
    v4i32 r;
    __builtin_memcpy(&r, p, sizeof r);
    return r;
  }
  __device__ static void mma(Acc& acc, const int8_t* a, int lda, const int8_t* b, int ldb) {
    const int lane = gpu::lane_id() % kTile16;
    const v4i32 a_row = load16(a + a_index(lane, 0, lda));  // row `lane` of A, k = 0..15
    const v4i32 b_col = load16(b + b_index(0, lane, ldb));  // column `lane` of B, k = 0..15
    // Signed A, signed B, no clamping (the int32 sum of 16 products never saturates).
    acc.v = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, a_row, true, b_col, acc.v, false);
  }
  __device__ static void store(int32_t* c, const Acc& acc) {
    const int lane = gpu::lane_id();
#pragma unroll
    for (int v = 0; v < 8; ++v) c[c_index(2 * v + lane / 16, lane % 16)] = acc.v[v];
  }
};
using Tile16 = Tile16Gfx11;

#else

struct Tile16Wmma {
  struct Acc {
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, int> f;
  };
  __device__ static void zero(Acc& acc) { nvcuda::wmma::fill_fragment(acc.f, 0); }
  __device__ static void mma(Acc& acc, const int8_t* a, int lda, const int8_t* b, int ldb) {
    nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, signed char, nvcuda::wmma::row_major>
        fa;
    nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, signed char, nvcuda::wmma::col_major>
        fb;
    nvcuda::wmma::load_matrix_sync(fa, reinterpret_cast<const signed char*>(a),
                                   static_cast<unsigned>(lda));
    nvcuda::wmma::load_matrix_sync(fb, reinterpret_cast<const signed char*>(b),
                                   static_cast<unsigned>(ldb));
    nvcuda::wmma::mma_sync(acc.f, fa, fb, acc.f);
  }
  __device__ static void store(int32_t* c, const Acc& acc) {
    nvcuda::wmma::store_matrix_sync(reinterpret_cast<int*>(c), acc.f, kTile16,
                                    nvcuda::wmma::mem_row_major);
  }
};
using Tile16 = Tile16Wmma;

#endif

// The primitive: acc += A * B (one 16-wide k slice).
__device__ __forceinline__ void mma_tile_16(
    Tile16::Acc& acc, const int8_t* a /*[16 x lda] s8 row-major*/, int lda,
    const int8_t* b /*[16 x ldb] s8, column n at b + n*ldb*/, int ldb) {
  Tile16::mma(acc, a, lda, b, ldb);
}

}  // namespace strata::mma
