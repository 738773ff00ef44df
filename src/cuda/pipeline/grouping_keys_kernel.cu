#include "cuda/common/check.hpp"
#include "cuda/pipeline/grouping.hpp"

namespace strata::cuda {
namespace {

__global__ void grouping_keys_kernel(const int32_t* __restrict__ ids,  // [T*k] expert per pair
                                     int64_t n_pairs, int32_t n_expert,
                                     uint32_t* __restrict__ keys,       // [T*k] sort key: expert
                                     int32_t* __restrict__ values) {    // [T*k] pair number
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_pairs) return;
  const int32_t id = ids[i];
  // An id outside [0, E) sorts after every expert, so no table index ever goes out of range.
  keys[i] = (id >= 0 && id < n_expert) ? static_cast<uint32_t>(id) : static_cast<uint32_t>(n_expert);
  values[i] = static_cast<int32_t>(i);
}

}  // namespace

void launch_grouping_keys(const int32_t* ids, int64_t n_pairs, int64_t n_expert, uint32_t* keys,
                          int32_t* values, cudaStream_t stream) {
  if (n_pairs == 0) return;
  constexpr int kThreads = 256;
  const auto grid = static_cast<unsigned>((n_pairs + kThreads - 1) / kThreads);
  grouping_keys_kernel<<<grid, kThreads, 0, stream>>>(ids, n_pairs, static_cast<int32_t>(n_expert), keys, values);
  STRATA_CUDA_CHECK_LAUNCH("grouping_keys_kernel");
}

}  // namespace strata::cuda
