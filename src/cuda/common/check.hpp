// CUDA error checks: every runtime call and every launch goes through these. Failures become
// strata::Error(Status::kCuda) naming the call site, so the C API can return them as statuses.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "common/error.hpp"

namespace strata::cuda {

inline void check(cudaError_t status, const char* what, const char* file, int line) {
  if (status == cudaSuccess) return;
  const Status code = (status == cudaErrorMemoryAllocation) ? Status::kOutOfMemory : Status::kCuda;
  fail(code, std::string("CUDA: ") + what + " failed: " + cudaGetErrorString(status) + " (" + file + ":" +
                 std::to_string(line) + ")");
}

}  // namespace strata::cuda

#define STRATA_CUDA_CHECK(call) ::strata::cuda::check((call), #call, __FILE__, __LINE__)
// After every kernel launch: the launch error always; the asynchronous error too in debug/test
// builds (STRATA_SYNC_CHECK), where it synchronises to pin a fault on the kernel that caused it.
#ifdef STRATA_SYNC_CHECK
#define STRATA_CUDA_CHECK_LAUNCH(name)                                              \
  do {                                                                              \
    ::strata::cuda::check(cudaGetLastError(), name " launch", __FILE__, __LINE__);  \
    ::strata::cuda::check(cudaDeviceSynchronize(), name, __FILE__, __LINE__);       \
  } while (0)
#else
#define STRATA_CUDA_CHECK_LAUNCH(name) ::strata::cuda::check(cudaGetLastError(), name " launch", __FILE__, __LINE__)
#endif
