// Device tensors that end where mapped memory ends: a kernel that reads one byte past a tensor
// faults (an illegal address, not a silent read of a neighbour's bytes). Each tensor gets its own
// range from the CUDA virtual memory API: its bytes rounded up to the allocation granularity are
// mapped, the granule after them is reserved and left unmapped, and the tensor is placed so that
// its last byte is the mapping's last. The driver's functions come through the runtime
// (cuda/common/driver_entry.hpp), so the tests link no driver library.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "cuda/common/check.hpp"
#include "cuda/common/driver_entry.hpp"
#include "pipeline/layer.hpp"

namespace strata::test {

namespace mapped_end_detail {

template <class Fn>
Fn entry(const char* symbol) {
  void* fn = cuda::driver_entry_point(symbol);
  if (fn == nullptr)
    throw std::runtime_error(std::string("mapped_end: no driver entry point ") + symbol);
  return reinterpret_cast<Fn>(fn);
}

inline void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(std::string("mapped_end: ") + what + " failed (" + std::to_string(r) +
                             ")");
}

struct Driver {
  decltype(&cuMemGetAllocationGranularity) granularity =
      entry<decltype(&cuMemGetAllocationGranularity)>("cuMemGetAllocationGranularity");
  decltype(&cuMemAddressReserve) reserve =
      entry<decltype(&cuMemAddressReserve)>("cuMemAddressReserve");
  decltype(&cuMemAddressFree) free = entry<decltype(&cuMemAddressFree)>("cuMemAddressFree");
  decltype(&cuMemCreate) create = entry<decltype(&cuMemCreate)>("cuMemCreate");
  decltype(&cuMemRelease) release = entry<decltype(&cuMemRelease)>("cuMemRelease");
  decltype(&cuMemMap) map = entry<decltype(&cuMemMap)>("cuMemMap");
  decltype(&cuMemUnmap) unmap = entry<decltype(&cuMemUnmap)>("cuMemUnmap");
  decltype(&cuMemSetAccess) set_access = entry<decltype(&cuMemSetAccess)>("cuMemSetAccess");
};

inline const Driver& driver() {
  static const Driver d;
  return d;
}

}  // namespace mapped_end_detail

// One tensor's copy on the device, its last byte the last mapped one.
class MappedEndTensor {
 public:
  MappedEndTensor(const void* host, size_t bytes) {
    const auto& drv = mapped_end_detail::driver();
    int device = 0;
    STRATA_CUDA_CHECK(cudaGetDevice(&device));
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    size_t granule = 0;
    mapped_end_detail::check(drv.granularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                             "cuMemGetAllocationGranularity");
    mapped_ = (bytes + granule - 1) / granule * granule;
    reserved_ = mapped_ + granule;  // the granule past the mapping stays unmapped
    mapped_end_detail::check(drv.reserve(&base_, reserved_, granule, 0, 0), "cuMemAddressReserve");
    mapped_end_detail::check(drv.create(&handle_, mapped_, &prop, 0), "cuMemCreate");
    mapped_end_detail::check(drv.map(base_, mapped_, 0, handle_, 0), "cuMemMap");
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    mapped_end_detail::check(drv.set_access(base_, mapped_, &access, 1), "cuMemSetAccess");
    data_ = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(base_) + mapped_ - bytes);
    STRATA_CUDA_CHECK(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice));
  }
  ~MappedEndTensor() {
    const auto& drv = mapped_end_detail::driver();
    (void)cudaDeviceSynchronize();
    (void)drv.unmap(base_, mapped_);
    (void)drv.release(handle_);
    (void)drv.free(base_, reserved_);
  }
  MappedEndTensor(const MappedEndTensor&) = delete;
  MappedEndTensor& operator=(const MappedEndTensor&) = delete;
  uint8_t* data() const { return data_; }

 private:
  CUdeviceptr base_ = 0;
  CUmemGenericAllocationHandle handle_ = 0;
  size_t mapped_ = 0, reserved_ = 0;
  uint8_t* data_ = nullptr;
};

// A layer's gate, up and down tensors, each ending where its mapping ends.
struct MappedEndLayer {
  std::unique_ptr<MappedEndTensor> gate, up, down;
  MoeLayerWeights weights;  // data pointers are device addresses
};

inline MappedEndLayer upload_layer_at_mapping_end(const MoeLayerWeights& host) {
  MappedEndLayer copy;
  copy.weights = host;
  auto place = [](const ExpertTensor& t, std::unique_ptr<MappedEndTensor>& slot) {
    slot = std::make_unique<MappedEndTensor>(t.data, t.span_bytes());
    return slot->data();
  };
  copy.weights.gate.data = place(host.gate, copy.gate);
  copy.weights.up.data = place(host.up, copy.up);
  copy.weights.down.data = place(host.down, copy.down);
  return copy;
}

}  // namespace strata::test
