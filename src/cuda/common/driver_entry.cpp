#include "cuda/common/driver_entry.hpp"

#include <cuda_runtime.h>

namespace strata::cuda {

void* driver_entry_point(const char* symbol) {
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &entry, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return entry;
}

}  // namespace strata::cuda
