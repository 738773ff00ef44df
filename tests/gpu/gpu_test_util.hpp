// Helpers of the GPU tests: skip without a device, device copies of host data, and a layer whose
// weights live on the device 2 bytes past an aligned address (as GGUF offsets are).
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cuda/common/check.hpp"
#include "cuda/common/device_buffer.hpp"
#include "cuda/common/upload_tensor.hpp"
#include "pipeline/layer.hpp"

namespace strata::test {

inline bool have_cuda_device() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// Every launch of a test process is synchronised and checked (cuda/common/check.hpp: built in
// with the tests, switched on here before main for each GPU test executable).
inline const bool kSyncCheckSwitchedOn = [] {
  cuda::set_sync_check(true);
  return true;
}();

// Turns the per-launch check off while it lives: a stream capture must not synchronise (the
// captured kernels do not run, so nothing is left unchecked).
class SyncCheckPause {
 public:
  SyncCheckPause() : was_(cuda::sync_check()) { cuda::set_sync_check(false); }
  ~SyncCheckPause() { cuda::set_sync_check(was_); }
  SyncCheckPause(const SyncCheckPause&) = delete;
  SyncCheckPause& operator=(const SyncCheckPause&) = delete;

 private:
  bool was_;
};

#define STRATA_REQUIRE_GPU()                                          \
  do {                                                                \
    if (!::strata::test::have_cuda_device()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

template <class T>
cuda::DeviceBuffer<T> to_device(const std::vector<T>& host) {
  cuda::DeviceBuffer<T> buffer(host.size());
  STRATA_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return buffer;
}

template <class T>
std::vector<T> to_host(const T* device, size_t count) {
  std::vector<T> host(count);
  if (count > 0) STRATA_CUDA_CHECK(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// Fills a device f32 buffer with NaN bits.
inline void poison_device(float* device, size_t count) {
  STRATA_CUDA_CHECK(cudaMemset(device, 0xFF, count * sizeof(float)));
}

// A layer whose three tensors are copied to the device at base + `offset` bytes: 2 by default, the
// least alignment the kernels must carry; 0 for 16-byte-aligned tensors (as a GGUF file has them).
struct DeviceLayerCopy {
  cuda::DeviceBuffer<uint8_t> gate, up, down;
  MoeLayerWeights weights;  // data pointers are device addresses
};

inline DeviceLayerCopy upload_layer(const MoeLayerWeights& host, size_t offset = 2) {
  DeviceLayerCopy copy;
  copy.weights = host;
  copy.weights.gate.data = cuda::upload_tensor(host.gate, copy.gate, offset);
  copy.weights.up.data = cuda::upload_tensor(host.up, copy.up, offset);
  copy.weights.down.data = cuda::upload_tensor(host.down, copy.down, offset);
  return copy;
}

}  // namespace strata::test
