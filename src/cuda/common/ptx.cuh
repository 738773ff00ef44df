// PTX wrappers shared by the kernels (sm_80+): cp.async with zero-fill, its group waits, and
// ldmatrix. Builds for older targets take plain loads and stores, so kernel sources stay one path.
#pragma once
#include <cstdint>

namespace strata::cuda {

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared through L2 only (.cg); `valid` false writes zeros and reads nothing.
__device__ __forceinline__ void cp_async_16(void* dst_shared, const void* src_global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst_shared)),
               "l"(src_global), "r"(valid ? 16 : 0));
#else
  *static_cast<uint4*>(dst_shared) = valid ? *static_cast<const uint4*>(src_global) : make_uint4(0, 0, 0, 0);
#endif
}

// 8 bytes through L1 (.ca); `valid` false writes zeros.
__device__ __forceinline__ void cp_async_8(void* dst_shared, const void* src_global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(shared_address(dst_shared)),
               "l"(src_global), "r"(valid ? 8 : 0));
#else
  *static_cast<uint2*>(dst_shared) = valid ? *static_cast<const uint2*>(src_global) : make_uint2(0, 0);
#endif
}

// 4 bytes through L1 (.ca); `valid` false writes zeros.
__device__ __forceinline__ void cp_async_4(void* dst_shared, const void* src_global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(dst_shared)),
               "l"(src_global), "r"(valid ? 4 : 0));
#else
  *static_cast<uint32_t*>(dst_shared) = valid ? *static_cast<const uint32_t*>(src_global) : 0u;
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most `Pending` of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}

__device__ __forceinline__ void cp_async_wait_all() { cp_async_wait<0>(); }

// Four 8x(16-byte) matrices; lane l names row l % 8 of matrix l / 8, and receives in r[j] the
// 4 bytes (l % 4) of row l / 4 of matrix j: exactly the int8 m16n8k32 fragment layout.
__device__ __forceinline__ void ldmatrix_x4(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3,
                                            const void* row_shared) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(shared_address(row_shared))
               : "memory");
#else
  (void)row_shared;
  r0 = r1 = r2 = r3 = 0;
  __trap();
#endif
}

// The same with two matrices: the rows from lanes 0-15.
__device__ __forceinline__ void ldmatrix_x2(uint32_t& r0, uint32_t& r1, const void* row_shared) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r0), "=r"(r1)
               : "r"(shared_address(row_shared))
               : "memory");
#else
  (void)row_shared;
  r0 = r1 = 0;
  __trap();
#endif
}

}  // namespace strata::cuda
