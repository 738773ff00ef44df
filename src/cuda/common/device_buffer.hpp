// Owning device allocations. A DeviceBuffer only grows: reserve() reallocates (and drops the old
// contents) when more elements are asked for, so a workspace reaches its high-water mark once.
// NOTE: cudaFree waits for the device, so freeing a buffer an earlier launch still reads is safe.
// A buffer can instead borrow memory it does not own (a caller's workspace): it never allocates
// nor frees then, and a reserve() beyond what it borrowed throws.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "common/error.hpp"
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
      : data_(std::exchange(other.data_, nullptr)),
        capacity_(std::exchange(other.capacity_, 0)),
        borrowed_(std::exchange(other.borrowed_, false)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      capacity_ = std::exchange(other.capacity_, 0);
      borrowed_ = std::exchange(other.borrowed_, false);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  // Ensures room for `count` elements; old contents are not kept when it reallocates.
  void reserve(size_t count) {
    if (count <= capacity_ && data_ != nullptr) return;
    require(!borrowed_, Status::kInternal,
            "workspace: a buffer needs " + std::to_string(count) + " elements, the caller's workspace holds " +
                std::to_string(capacity_));
    release();
    const size_t bytes = (count == 0 ? 1 : count) * sizeof(T);
    void* p = nullptr;
    STRATA_CUDA_CHECK(cudaMalloc(&p, bytes));
    data_ = static_cast<T*>(p);
    capacity_ = count;
  }

  // Uses `count` elements at `data` (not owned) from now on; frees what it owned before.
  void borrow(T* data, size_t count) {
    release();
    data_ = data;
    capacity_ = count;
    borrowed_ = true;
  }

  T* get() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  void release() noexcept {
    if (data_ != nullptr && !borrowed_) cudaFree(data_);  // never throws from a destructor path
    data_ = nullptr;
    capacity_ = 0;
    borrowed_ = false;
  }

  T* data_ = nullptr;
  size_t capacity_ = 0;
  bool borrowed_ = false;
};

// Lays buffers out one after another in a caller's memory, each 256-byte aligned. With a null
// base it only counts the bytes (the same layout, so counting and carving always agree).
class ArenaCarver {
 public:
  static constexpr size_t kAlignBytes = 256;
  ArenaCarver(void* base, size_t bytes) : base_(static_cast<uint8_t*>(base)), bytes_(bytes) {}

  template <class T>
  void take(DeviceBuffer<T>& buffer, size_t count) {
    const size_t at = used_;
    used_ = (used_ + (count == 0 ? 1 : count) * sizeof(T) + kAlignBytes - 1) / kAlignBytes * kAlignBytes;
    if (base_ == nullptr) return;
    require(used_ <= bytes_, Status::kInvalidArgument,
            "workspace: " + std::to_string(bytes_) + " bytes is too small (strata_moe_workspace_bytes)");
    buffer.borrow(reinterpret_cast<T*>(base_ + at), count);
  }
  size_t used() const { return used_; }

 private:
  uint8_t* base_;
  size_t bytes_;
  size_t used_ = 0;
};

}  // namespace strata::cuda
