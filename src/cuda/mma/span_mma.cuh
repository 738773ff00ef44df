// The format-aware fp16 MMA steps of the q10 kernels: one span's integer dot as kSteps chained k16
// products, the accumulator restarted on step 0. Instantiating SpanMma<F> for a format whose span
// could reach 2^24 does not compile (SpanShape's static_assert), so neither does a kernel that
// multiplies such a format on the fp16 tensor cores.
//
//   step 0:      acc  = A[:, k0 .. k0+15] * B[k0 .. k0+15, :]     (k0 = the span's first k)
//   step s > 0:  acc += A[:, k0+16s ..] * B[k0+16s .., :]
// After step kSteps - 1, acc holds the exact span dot (an integer below 2^24 in magnitude) for
// fold_span<F> (pipeline/arith_q10.hpp).
// HIP (gfx11) has the 16x16x16 tile step only; nvcc has every step.
#pragma once
#include <cstdint>

#include "cuda/mma/mma_tile_16_f16.cuh"
#include "cuda/mma/span_shape.hpp"
#if !defined(__HIP__)
#include <cuda_fp16.h>

#include "cuda/mma/mma_m16n8k16_f16.cuh"
#include "cuda/mma/wgmma_f16.cuh"
#endif

namespace strata::cuda::mma {

template <class F>
struct SpanMma {
  using Shape = SpanShape<F>;  // NOTE: the 2^24 guard; every member below goes through it
  static constexpr int kSteps = Shape::kSteps;

  // 16x16x16 tile: acc [16 x 16] f32 per warp / wave32 (mma_tile_16_f16.cuh, CUDA and HIP).
  __device__ __forceinline__ static void step_tile16(strata::mma::Tile16F16::Acc& acc,
                                                     const strata::mma::Half* a, int lda,
                                                     const strata::mma::Half* b, int ldb,
                                                     int step) {
    if (step == 0) strata::mma::Tile16F16::zero(acc);
    strata::mma::mma_tile_16_f16(acc, a, lda, b, ldb);
  }

#if !defined(__HIP__)
  // mma.sync m16n8k16: acc [16 x 8] f32 per warp (fragments: mma_m16n8k16_f16.cuh).
  __device__ __forceinline__ static void step_m16n8k16(float (&acc)[4], const uint32_t (&a)[4],
                                                       const uint32_t (&b)[2], int step) {
    if (step == 0)
      mma_m16n8k16_f16_zero(acc, a, b);
    else
      mma_m16n8k16_f16_acc(acc, a, b);
  }

  // wgmma m64nNk16, A from registers: acc [64 x N] f32 per warpgroup (wgmma_f16.cuh).
  template <int N>
  __device__ __forceinline__ static void step_wgmma_rs(float (&acc)[N / 2], const uint32_t (&a)[4],
                                                       uint64_t b_desc, int step) {
    wgmma_f16_rs<N>(acc, a, b_desc, step != 0);
  }

  // wgmma m64nNk16, A from shared memory.
  template <int N>
  __device__ __forceinline__ static void step_wgmma_ss(float (&acc)[N / 2], uint64_t a_desc,
                                                       uint64_t b_desc, int step) {
    wgmma_f16_ss<N>(acc, a_desc, b_desc, step != 0);
  }
#endif
};

}  // namespace strata::cuda::mma
