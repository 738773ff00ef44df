// fp16 tensor-core primitive (sm_80+): D[16x8] f32 = A[16x16] f16 (row) * B[16x8] f16 (col) + C.
// The q10 profile feeds it exact integers (|a| <= 511, |w| <= 2048) and restarts the accumulator
// per span, so every partial sum stays below 2^24 and D is the exact integer dot (span_mma.cuh
// holds the format-aware guard; tests/gpu/f16_mma_exact_test.cpp checks the hardware).
//
// Fragment ownership (lane = 4*group + tig, group = lane / 4, tig = lane % 4), two f16 per
// 32-bit register, the lower k in the low half:
//   a[0]: A row group,   k = 2*tig, 2*tig+1         a[1]: A row group+8, same k
//   a[2]: A row group,   k = 8+2*tig, 8+2*tig+1     a[3]: A row group+8, k = 8+2*tig ..
//   b[0]: B col group,   k = 2*tig, 2*tig+1         b[1]: B col group,   k = 8+2*tig ..
//   c[0], c[1]: row group, cols 2*tig, 2*tig+1      c[2], c[3]: row group+8, same cols
// (the A fragment is ldmatrix.x4 of the four 8x8 f16 quadrants, as for the int8 m16n8k32).
#pragma once
#include <cstdint>

namespace strata::cuda::mma {

inline constexpr int kF16M = 16, kF16N = 8, kF16K = 16;

// d = a * b + c.
__device__ __forceinline__ void mma_m16n8k16_f16(float (&d)[4], const uint32_t (&a)[4],
                                                 const uint32_t (&b)[2], const float (&c)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  (void)a;
  (void)b;
  (void)c;
  d[0] = d[1] = d[2] = d[3] = 0.0f;
  __trap();
#endif
}

// d += a * b.
__device__ __forceinline__ void mma_m16n8k16_f16_acc(float (&d)[4], const uint32_t (&a)[4],
                                                     const uint32_t (&b)[2]) {
  const float c[4] = {d[0], d[1], d[2], d[3]};
  mma_m16n8k16_f16(d, a, b, c);
}

// d = a * b: a fresh accumulator (the first k16 step of a span).
__device__ __forceinline__ void mma_m16n8k16_f16_zero(float (&d)[4], const uint32_t (&a)[4],
                                                      const uint32_t (&b)[2]) {
  const float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  mma_m16n8k16_f16(d, a, b, c);
}

}  // namespace strata::cuda::mma
