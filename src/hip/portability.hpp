// The few things a kernel source needs from its GPU compiler, for nvcc and for clang compiling
// HIP, so one kernel source serves both: thread / block / grid indices, the block barrier, the
// wave (warp) barrier, the wave width, and shared memory. Kernels call strata::gpu::* and never
// threadIdx / __syncthreads directly.
//
// Three compilers are meant:
//   - nvcc (CUDA): the CUDA built-ins.
//   - hipcc / clang with the HIP headers (STRATA_MOE_HIP=ON, ROCm >= 6): <hip/hip_runtime.h>.
//   - clang -x hip --cuda-device-only -nogpuinc -nogpulib without any HIP header
//     (STRATA_HIP_NO_RUNTIME, the gfx1100 object check of cmake/hip_check.cmake): the attribute
//     keywords, the handful of math functions arith.hpp calls, and the bit casts of bytes.hpp are
//     declared here on clang builtins, and every index comes from an amdgcn builtin.
// NOTE: include this header first in a HIP translation unit: common/hd.hpp keys its host/device
// macros on __HIPCC__, which the bare path defines here.
#pragma once

#if defined(__HIP__) && defined(STRATA_HIP_NO_RUNTIME)
// ---- bare clang, HIP language, no HIP headers ----------------------------------------------
#include <cmath>
#include <cstdint>

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((amdgpu_flat_work_group_size(1, __VA_ARGS__)))
#ifndef __HIPCC__
#define __HIPCC__ 1
#endif

// Device overloads (clang overloads on __host__/__device__) of the libm functions arith.hpp uses:
// each is the IEEE operation itself, lowered to one instruction or an exact expansion.
__device__ inline float fmaf(float a, float b, float c) {
  return __builtin_fmaf(a, b, c);
}
__device__ inline float fmaxf(float a, float b) {
  return __builtin_fmaxf(a, b);
}
__device__ inline float fminf(float a, float b) {
  return __builtin_fminf(a, b);
}
__device__ inline float fabsf(float a) {
  return __builtin_fabsf(a);
}
__device__ inline float roundf(float a) {
  return __builtin_roundf(a);
}
__device__ inline float __uint_as_float(unsigned int bits) {
  return __builtin_bit_cast(float, bits);
}
__device__ inline unsigned int __float_as_uint(float f) {
  return __builtin_bit_cast(unsigned int, f);
}
__device__ inline float __int_as_float(int bits) {
  return __builtin_bit_cast(float, bits);
}
__device__ inline int __float_as_int(float f) {
  return __builtin_bit_cast(int, f);
}
__device__ inline int min(int a, int b) {
  return a < b ? a : b;
}
__device__ inline int max(int a, int b) {
  return a > b ? a : b;
}

#elif defined(__HIP__)
// ---- hipcc / clang with the ROCm headers ----------------------------------------------------
#include <hip/hip_runtime.h>
#endif

#include <cstdint>

namespace strata::gpu {

#if defined(__HIP__)
inline constexpr int kWaveSize = 32;  // gfx11 (RDNA3) kernels are compiled for wave32

#if defined(STRATA_HIP_NO_RUNTIME)
__device__ __forceinline__ int thread_x() {
  return static_cast<int>(__builtin_amdgcn_workitem_id_x());
}
__device__ __forceinline__ int block_x() {
  return static_cast<int>(__builtin_amdgcn_workgroup_id_x());
}
// The dispatch packet (hsa_kernel_dispatch_packet_t): workgroup_size_x is the u16 at byte 4,
// grid_size_x (in work-items) the u32 at byte 12.
__device__ __forceinline__ int block_dim_x() {
  const auto* packet = static_cast<const uint8_t*>(__builtin_amdgcn_dispatch_ptr());
  return static_cast<int>(*reinterpret_cast<const uint16_t*>(packet + 4));
}
__device__ __forceinline__ int grid_dim_x() {
  const auto* packet = static_cast<const uint8_t*>(__builtin_amdgcn_dispatch_ptr());
  const uint32_t grid_items = *reinterpret_cast<const uint32_t*>(packet + 12);
  const auto group = static_cast<uint32_t>(block_dim_x());
  return static_cast<int>((grid_items + group - 1) / group);
}
// __syncthreads: workgroup release fence, s_barrier, acquire fence (the HIP headers' sequence).
__device__ __forceinline__ void sync_block() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
#else
__device__ __forceinline__ int thread_x() {
  return static_cast<int>(threadIdx.x);
}
__device__ __forceinline__ int block_x() {
  return static_cast<int>(blockIdx.x);
}
__device__ __forceinline__ int block_dim_x() {
  return static_cast<int>(blockDim.x);
}
__device__ __forceinline__ int grid_dim_x() {
  return static_cast<int>(gridDim.x);
}
__device__ __forceinline__ void sync_block() {
  __syncthreads();
}
#endif
// A wave runs in lock step; the fence keeps the compiler from moving LDS accesses across it.
__device__ __forceinline__ void sync_wave() {
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "wavefront");
  __builtin_amdgcn_wave_barrier();
}
__device__ __forceinline__ int lane_id() {
  return thread_x() % kWaveSize;
}

#else  // nvcc
inline constexpr int kWaveSize = 32;
__device__ __forceinline__ int thread_x() {
  return static_cast<int>(threadIdx.x);
}
__device__ __forceinline__ int block_x() {
  return static_cast<int>(blockIdx.x);
}
__device__ __forceinline__ int block_dim_x() {
  return static_cast<int>(blockDim.x);
}
__device__ __forceinline__ int grid_dim_x() {
  return static_cast<int>(gridDim.x);
}
__device__ __forceinline__ void sync_block() {
  __syncthreads();
}
__device__ __forceinline__ void sync_wave() {
  __syncwarp();
}
__device__ __forceinline__ int lane_id() {
  return static_cast<int>(threadIdx.x) % kWaveSize;
}
#endif

}  // namespace strata::gpu
