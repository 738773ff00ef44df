// int8 tensor-core primitive: D[16x8] s32 = A[16x32] s8 (row) * B[32x8] s8 (col) + C.
//
// Fragment ownership (lane = 4*group + tig, group = lane / 4, tig = lane % 4):
//   a[0]: A row group,     k = 4*tig .. 4*tig+3      a[1]: A row group+8, same k
//   a[2]: A row group,     k = 16+4*tig ..           a[3]: A row group+8, k = 16+4*tig ..
//   b[0]: B col group,     k = 4*tig .. 4*tig+3      b[1]: B col group,   k = 16+4*tig ..
//   c[0], c[1]: row group,   cols 2*tig, 2*tig+1     c[2], c[3]: row group+8, same cols
// Four int8 values per 32-bit register, lowest k in the lowest byte.
#pragma once
#include <cstdint>

namespace strata::cuda::mma {

inline constexpr int kM = 16, kN = 8, kK = 32;

__device__ __forceinline__ void mma_m16n8k32_s8(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                                const int32_t (&c)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]),
        "r"(c[3]));
#else
  // int8 mma.sync needs sm_80: a build for an older target stops here rather than return garbage.
  (void)a;
  (void)b;
  (void)c;
  d[0] = d[1] = d[2] = d[3] = 0;
  __trap();
#endif
}

}  // namespace strata::cuda::mma
