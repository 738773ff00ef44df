#include "cuda/common/check.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "cuda/pipeline/grouping_units.cuh"
#include "cuda/pipeline/tile_offsets.cuh"

namespace strata::cuda {
namespace {

constexpr int kItems = 16;  // entries per thread and chunk, all loaded before the chunk's scan

// One CTA (grouping_units.cuh, step 2): hist becomes its exclusive sum in place; expert_offsets[b]
// is bucket b's first position (b = E: the pairs past every expert), then the tile offsets.
__global__ void __launch_bounds__(kTileScanThreads)
    grouping_scan_kernel(int32_t* __restrict__ hist,            // [(E + 1) * units]
                         int64_t n_expert, int64_t units, int tile_pairs,
                         int32_t* __restrict__ expert_offsets,  // [E + 1]
                         int32_t* __restrict__ tile_offsets) {  // [E + 1]
  __shared__ TileScan::TempStorage temp;
  const int64_t n = (n_expert + 1) * units;
  int32_t carried = 0;
  for (int64_t base = 0; base < n; base += int64_t{kTileScanThreads} * kItems) {
    int32_t items[kItems];
    const int64_t first = base + static_cast<int64_t>(threadIdx.x) * kItems;
#pragma unroll
    for (int i = 0; i < kItems; ++i) items[i] = first + i < n ? hist[first + i] : 0;
    int32_t chunk_total = 0;
    TileScan(temp).ExclusiveSum(items, items, chunk_total);
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (first + i < n) hist[first + i] = carried + items[i];
    carried += chunk_total;
    __syncthreads();  // temp storage reused by the next chunk
  }
  for (int64_t b = threadIdx.x; b <= n_expert; b += kTileScanThreads)
    expert_offsets[b] = units > 0 ? hist[b * units] : 0;
  __syncthreads();  // every expert offset before the tiles read them
  block_tile_offsets(expert_offsets, n_expert, tile_pairs, tile_offsets, temp);
}

}  // namespace

void launch_grouping_scan(int32_t* hist, int64_t n_expert, int64_t units, int tile_pairs, int32_t* expert_offsets,
                          int32_t* tile_offsets, cudaStream_t stream) {
  grouping_scan_kernel<<<1, kTileScanThreads, 0, stream>>>(hist, n_expert, units, tile_pairs, expert_offsets,
                                                           tile_offsets);
  STRATA_CUDA_CHECK_LAUNCH("grouping_scan_kernel");
}

}  // namespace strata::cuda
