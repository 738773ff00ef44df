// CUDA error checks: every runtime call and every launch goes through these. Failures become
// strata::Error(Status::kCuda) naming the call site, so the C API can return them as statuses.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <string>

#include "common/error.hpp"

namespace strata::cuda {

inline void check(cudaError_t status, const char* what, const char* file, int line) {
  if (status == cudaSuccess) return;
  const Status code = (status == cudaErrorMemoryAllocation) ? Status::kOutOfMemory : Status::kCuda;
  fail(code, std::string("CUDA: ") + what + " failed: " + cudaGetErrorString(status) + " (" + file + ":" +
                 std::to_string(line) + ")");
}

// Test builds (STRATA_SYNC_CHECK, defined when the tests are built) can also synchronise after every
// launch and check the asynchronous error, to pin a fault on the kernel that caused it. It is a
// switch of the process, off unless turned on: the test executables turn it on
// (tests/gpu/gpu_test_util.hpp); the CLI and the benchmarks of the same build leave it off and
// time the kernels a release build runs. Off around a stream capture (it would end the capture).
inline std::atomic<bool>& sync_check_switch() {
  static std::atomic<bool> on{false};
  return on;
}
inline void set_sync_check(bool on) { sync_check_switch().store(on, std::memory_order_relaxed); }
inline bool sync_check() { return sync_check_switch().load(std::memory_order_relaxed); }
#ifdef STRATA_SYNC_CHECK
inline constexpr bool kSyncCheckBuilt = true;
#else
inline constexpr bool kSyncCheckBuilt = false;
#endif

}  // namespace strata::cuda

#define STRATA_CUDA_CHECK(call) ::strata::cuda::check((call), #call, __FILE__, __LINE__)
// After every kernel launch: the launch error always; in a STRATA_SYNC_CHECK build with the switch
// on, the kernel's own (asynchronous) error too.
#ifdef STRATA_SYNC_CHECK
#define STRATA_CUDA_CHECK_LAUNCH(name)                                                \
  do {                                                                                \
    ::strata::cuda::check(cudaGetLastError(), name " launch", __FILE__, __LINE__);    \
    if (::strata::cuda::sync_check())                                                 \
      ::strata::cuda::check(cudaDeviceSynchronize(), name, __FILE__, __LINE__);       \
  } while (0)
#else
#define STRATA_CUDA_CHECK_LAUNCH(name) ::strata::cuda::check(cudaGetLastError(), name " launch", __FILE__, __LINE__)
#endif
