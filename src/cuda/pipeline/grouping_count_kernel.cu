#include "cuda/common/check.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "cuda/pipeline/grouping_units.cuh"

namespace strata::cuda {
namespace {

// Warp w of CTA c counts unit u = c * kCountWarps + w (grouping_units.cuh, step 1).
__global__ void __launch_bounds__(kCountWarps * 32)
    grouping_count_kernel(const int32_t* __restrict__ ids,  // [P] expert per pair
                          int64_t n_pairs, int32_t n_expert, int64_t units, int64_t unit_steps,
                          int32_t* __restrict__ hist) {     // [(E + 1) * units]
  __shared__ int32_t counts[kCountWarps][kMaxCountBuckets];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t u = static_cast<int64_t>(blockIdx.x) * kCountWarps + warp;
  if (u >= units) return;  // whole warps: no warp-wide call below is left by part of a warp
  const int buckets = n_expert + 1;
  int32_t* mine = counts[warp];
  for (int b = lane; b < buckets; b += 32) mine[b] = 0;
  __syncwarp();
  for (int64_t batch = 0; batch < unit_steps; batch += kStepBatch) {
    int bucket[kStepBatch];
    grouping_bucket_batch(ids, n_pairs, n_expert, u, unit_steps, batch, lane, bucket);
#pragma unroll
    for (int s = 0; s < kStepBatch; ++s) {
      const int b = bucket[s];  // -1: past the pairs
      const unsigned peers = __match_any_sync(0xffffffffu, b);
      if (b >= 0 && lane == __ffs(peers) - 1) mine[b] += __popc(peers);
      __syncwarp();  // this step's counts before the next step's
    }
  }
  for (int b = lane; b < buckets; b += 32) hist[static_cast<int64_t>(b) * units + u] = mine[b];
}

}  // namespace

void launch_grouping_count(const int32_t* ids, int64_t n_pairs, int64_t n_expert, int64_t units, int64_t unit_steps,
                           int32_t* hist, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>((units + kCountWarps - 1) / kCountWarps);
  grouping_count_kernel<<<grid, kCountWarps * 32, 0, stream>>>(ids, n_pairs, static_cast<int32_t>(n_expert), units,
                                                               unit_steps, hist);
  STRATA_CUDA_CHECK_LAUNCH("grouping_count_kernel");
}

}  // namespace strata::cuda
