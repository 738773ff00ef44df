#include "cuda/common/check.hpp"
#include "cuda/pipeline/grouping.hpp"

namespace strata::cuda {
namespace {

// Thread i: sorted pair i's token, slot and inverse; and, for i <= E, expert i's first pair
// (a lower bound in the sorted keys), so no counting and no atomics.
__global__ void grouping_tables_kernel(const uint32_t* __restrict__ sorted_keys,   // [P] sorted experts
                                       const int32_t* __restrict__ sorted_values,  // [P] pair numbers
                                       int64_t n_pairs, int k, int64_t n_expert,
                                       DeviceGroupingTables tables) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n_pairs) {
    const int32_t pair = sorted_values[i];
    tables.pair_token[i] = pair / k;
    tables.pair_slot[i] = pair % k;
    tables.slot_to_pair[pair] = static_cast<int32_t>(i);
  }
  if (i <= n_expert) {
    int64_t lo = 0, hi = n_pairs;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (sorted_keys[mid] < static_cast<uint32_t>(i)) lo = mid + 1; else hi = mid;
    }
    tables.expert_offsets[i] = static_cast<int32_t>(lo);
  }
}

}  // namespace

void launch_grouping_tables(const uint32_t* sorted_keys, const int32_t* sorted_values, int64_t n_pairs, int k,
                            int64_t n_expert, const DeviceGroupingTables& tables, cudaStream_t stream) {
  const int64_t n = n_pairs > n_expert + 1 ? n_pairs : n_expert + 1;
  constexpr int kThreads = 256;
  const auto grid = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  grouping_tables_kernel<<<grid, kThreads, 0, stream>>>(sorted_keys, sorted_values, n_pairs, k, n_expert, tables);
  STRATA_CUDA_CHECK_LAUNCH("grouping_tables_kernel");
}

}  // namespace strata::cuda
