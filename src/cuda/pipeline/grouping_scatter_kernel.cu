#include "cuda/common/check.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "cuda/pipeline/grouping_units.cuh"

namespace strata::cuda {
namespace {

// Warp w of CTA c places unit u = c * kCountWarps + w's pairs (grouping_units.cuh, step 3).
__global__ void __launch_bounds__(kCountWarps * 32)
    grouping_scatter_kernel(const int32_t* __restrict__ ids,   // [P] expert per pair
                            int64_t n_pairs, int k, int32_t n_expert, int64_t units, int64_t unit_steps,
                            const int32_t* __restrict__ base,  // [(E + 1) * units] scanned counts
                            DeviceGroupingTables tables) {
  __shared__ int32_t next[kCountWarps][kMaxCountBuckets];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t u = static_cast<int64_t>(blockIdx.x) * kCountWarps + warp;
  if (u >= units) return;  // whole warps: no warp-wide call below is left by part of a warp
  const int buckets = n_expert + 1;
  int32_t* mine = next[warp];
  for (int b = lane; b < buckets; b += 32) mine[b] = base[static_cast<int64_t>(b) * units + u];
  __syncwarp();
  const unsigned below = (1u << lane) - 1u;  // the lanes before this one
  for (int64_t batch = 0; batch < unit_steps; batch += kStepBatch) {
    int bucket[kStepBatch];
    grouping_bucket_batch(ids, n_pairs, n_expert, u, unit_steps, batch, lane, bucket);
#pragma unroll
    for (int s = 0; s < kStepBatch; ++s) {
      const int b = bucket[s];  // -1: past the pairs
      const unsigned peers = __match_any_sync(0xffffffffu, b);
      const int32_t at = b >= 0 ? mine[b] + __popc(peers & below) : 0;
      __syncwarp();  // every lane has read its bucket's position before the leader moves it
      if (b >= 0) {
        if (lane == __ffs(peers) - 1) mine[b] = at + __popc(peers);
        const auto pair = static_cast<int32_t>((u * unit_steps + batch + s) * 32 + lane);
        tables.pair_token[at] = pair / k;
        tables.pair_slot[at] = pair % k;
        tables.slot_to_pair[pair] = at;
      }
      __syncwarp();  // this step's positions before the next step reads them
    }
  }
}

}  // namespace

void launch_grouping_scatter(const int32_t* ids, int64_t n_pairs, int k, int64_t n_expert, int64_t units,
                             int64_t unit_steps, const int32_t* base, const DeviceGroupingTables& tables,
                             cudaStream_t stream) {
  const auto grid = static_cast<unsigned>((units + kCountWarps - 1) / kCountWarps);
  grouping_scatter_kernel<<<grid, kCountWarps * 32, 0, stream>>>(ids, n_pairs, k, static_cast<int32_t>(n_expert),
                                                                 units, unit_steps, base, tables);
  STRATA_CUDA_CHECK_LAUNCH("grouping_scatter_kernel");
}

}  // namespace strata::cuda
