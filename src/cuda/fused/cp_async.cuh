// cp.async (sm_80+) helpers: global -> shared copies that bypass registers, zero-filled when the
// source is not valid (padding pairs), grouped and waited on per pipeline stage.
#pragma once
#include <cstdint>

namespace strata::cuda::fused {

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes, L2 only (.cg); `valid` false writes 16 zero bytes and reads nothing.
__device__ __forceinline__ void cp_async_16(void* dst_shared, const void* src_global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst_shared)),
               "l"(src_global), "r"(src_bytes));
#else
  *static_cast<uint4*>(dst_shared) = valid ? *static_cast<const uint4*>(src_global) : make_uint4(0, 0, 0, 0);
#endif
}

// 8 bytes through L1 (.ca); `valid` false writes 8 zero bytes.
__device__ __forceinline__ void cp_async_8(void* dst_shared, const void* src_global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int src_bytes = valid ? 8 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(shared_address(dst_shared)),
               "l"(src_global), "r"(src_bytes));
#else
  *static_cast<uint2*>(dst_shared) = valid ? *static_cast<const uint2*>(src_global) : make_uint2(0, 0);
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
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
}

}  // namespace strata::cuda::fused
