// Owning device allocations. A DeviceBuffer only grows: reserve() reallocates (and drops the old
// contents) when more elements are asked for, so a workspace reaches its high-water mark once.
// NOTE: cudaFree waits for the device, so freeing a buffer an earlier launch still reads is safe.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda/common/check.hpp"

namespace strata::cuda {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) { reserve(count); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  // Ensures room for `count` elements; old contents are not kept when it reallocates.
  void reserve(size_t count) {
    if (count <= capacity_ && data_ != nullptr) return;
    release();
    const size_t bytes = (count == 0 ? 1 : count) * sizeof(T);
    void* p = nullptr;
    STRATA_CUDA_CHECK(cudaMalloc(&p, bytes));
    data_ = static_cast<T*>(p);
    capacity_ = count;
  }

  T* get() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  void release() noexcept {
    if (data_ != nullptr) cudaFree(data_);  // never throws from a destructor path
    data_ = nullptr;
    capacity_ = 0;
  }

  T* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace strata::cuda
