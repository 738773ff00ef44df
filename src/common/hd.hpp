// Host/device portability macros shared by every header that may be compiled by nvcc or hipcc.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define STRATA_HD __host__ __device__
#define STRATA_HD_INLINE __host__ __device__ __forceinline__
#else
#define STRATA_HD
#define STRATA_HD_INLINE inline
#endif

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define STRATA_DEVICE_PASS 1
#else
#define STRATA_DEVICE_PASS 0
#endif
