// wgmma int8 (sm_90a): the warpgroup-wide asynchronous tensor-core product, A from registers and
// B from shared memory, with its fences, commit/wait and the shared-memory matrix descriptor.
//
// Fragment layouts (per warp w = 0..3 of the warpgroup, lane = 4 * group + tig):
//   A (4 x b32, m64k32): a[0] = row 16w + group, k 4tig..4tig+3; a[1] = row + 8; a[2] = k + 16;
//     a[3] = row + 8, k + 16 — the m16n8k32 A fragment, so ldmatrix.x4 fills it;
//   D (N/2 x s32, m64nN): d[4j + 2h + c] = row 16w + group + 8h, column 8j + 2tig + c.
// B is K-major in "core matrices" of 8 rows x 16 bytes stored as 128 contiguous bytes, no swizzle:
// the descriptor gives the byte distance between core matrices adjacent in K (leading) and in N
// (stride). Every asynchronous product must be waited for before its accumulators are read, and
// wgmma_fence() must come between ordinary register writes (A, D) and the product that reads them.
// Builds for other targets get a trapping body: the host only launches these on sm_90a images.
#pragma once
#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define STRATA_WGMMA_AVAILABLE 1
#else
#define STRATA_WGMMA_AVAILABLE 0
#endif

namespace strata::cuda::mma {

// The 64-bit shared-memory matrix descriptor, no swizzle (mode 0), base offset 0.
__device__ __forceinline__ uint64_t wgmma_desc(uint32_t shared_byte_address, uint32_t leading_bytes,
                                               uint32_t stride_bytes) {
  return static_cast<uint64_t>((shared_byte_address >> 4) & 0x3FFFu) |
         (static_cast<uint64_t>((leading_bytes >> 4) & 0x3FFFu) << 16) |
         (static_cast<uint64_t>((stride_bytes >> 4) & 0x3FFFu) << 32);
}

__device__ __forceinline__ void wgmma_fence() {
#if STRATA_WGMMA_AVAILABLE
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit() {
#if STRATA_WGMMA_AVAILABLE
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

// Waits until at most `Pending` committed groups of this warpgroup are still in flight.
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
#if STRATA_WGMMA_AVAILABLE
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
#endif
}

// Pins a register's value at this point of the instruction stream: the compiler may not move a
// read or write of `r` across it (used around the asynchronous products).
__device__ __forceinline__ void fence_register(int32_t& r) { asm volatile("" : "+r"(r)::"memory"); }

__device__ __forceinline__ void fence_register(uint32_t& r) { asm volatile("" : "+r"(r)::"memory"); }

template <class T, int N>
__device__ __forceinline__ void fence_registers(T (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) fence_register(r[i]);
}

// D[64 x 64] += A[64 x 32] (registers) * B[64 x 32]^T (shared memory, K-major, described by b_desc).
__device__ __forceinline__ void wgmma_m64n64k32_s8_rs(int32_t (&d)[32], const uint32_t (&a)[4], uint64_t b_desc) {
#if STRATA_WGMMA_AVAILABLE
  asm volatile("{\n"
               ".reg .pred p;\n"
               "setp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
               "{%32, %33, %34, %35}, %36, p;\n"
               "}\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                 "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
                 "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
                 "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc));
#else
  (void)d;
  (void)a;
  (void)b_desc;
  __trap();
#endif
}

// D[64 x 128] += A[64 x 32] (registers) * B[128 x 32]^T (shared memory, K-major, described by b_desc).
__device__ __forceinline__ void wgmma_m64n128k32_s8_rs(int32_t (&d)[64], const uint32_t (&a)[4], uint64_t b_desc) {
#if STRATA_WGMMA_AVAILABLE
  asm volatile("{\n"
               ".reg .pred p;\n"
               "setp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
               "{%64, %65, %66, %67}, %68, p;\n"
               "}\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                 "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
                 "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
                 "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
                 "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
                 "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
                 "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
                 "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc));
#else
  (void)d;
  (void)a;
  (void)b_desc;
  __trap();
#endif
}

}  // namespace strata::cuda::mma
