// Persistent grids: as many CTAs of a kernel as fit on the current device at once, the kernels
// striding over their work items. Occupancy (and the dynamic shared-memory opt-in) is worked out
// once per kernel and device, not per launch.
#pragma once
#include <cstddef>

namespace strata::cuda {

// CTAs for a persistent launch of `kernel` with `threads` threads and `dynamic_shared_bytes` of
// dynamic shared memory on the current device (at least one per SM). Throws strata::Error on a
// CUDA failure; a failed query is not remembered.
int persistent_grid(const void* kernel, int threads, size_t dynamic_shared_bytes);

template <class Kernel>
int persistent_grid(Kernel* kernel, int threads, size_t dynamic_shared_bytes) {
  return persistent_grid(reinterpret_cast<const void*>(kernel), threads, dynamic_shared_bytes);
}

}  // namespace strata::cuda
