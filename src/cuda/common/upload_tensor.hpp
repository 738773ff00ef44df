// Host expert tensors copied to the device, for the callers that hold weights in host memory (the
// backend, the CLI's demo and bench, the tests).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/common/check.hpp"
#include "cuda/common/device_buffer.hpp"
#include "pipeline/layer.hpp"

namespace strata::cuda {

// Copies the bytes of `host` (its span_bytes()) to `offset` bytes past the start of `buffer` and
// returns their device address. offset 0 keeps the allocation's alignment (the kernels' TMA path
// needs 16 bytes); 2 is the least alignment the kernels carry.
inline const uint8_t* upload_tensor(const ExpertTensor& host, DeviceBuffer<uint8_t>& buffer, size_t offset = 0) {
  const size_t bytes = host.span_bytes();
  buffer.reserve(bytes + offset);
  STRATA_CUDA_CHECK(cudaMemcpy(buffer.get() + offset, host.data, bytes, cudaMemcpyHostToDevice));
  return buffer.get() + offset;
}

}  // namespace strata::cuda
