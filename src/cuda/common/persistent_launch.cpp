#include "cuda/common/persistent_launch.hpp"

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <utility>

#include "cuda/common/check.hpp"

namespace strata::cuda {

int persistent_grid(const void* kernel, int threads, size_t dynamic_shared_bytes) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> grid_of;  // (kernel, device) -> CTAs
  int device = 0;
  STRATA_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(kernel, device);
  if (const auto found = grid_of.find(key); found != grid_of.end()) return found->second;
  int sms = 0, per_sm = 0;
  STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // NOTE: CUDA keeps the opt-in per device, so it is set once per (kernel, device) as well.
  if (dynamic_shared_bytes > 0)
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(dynamic_shared_bytes)));
  STRATA_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_shared_bytes));
  const int grid = sms * (per_sm > 0 ? per_sm : 1);
  grid_of.emplace(key, grid);
  return grid;
}

}  // namespace strata::cuda
