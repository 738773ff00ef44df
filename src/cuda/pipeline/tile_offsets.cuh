// Row-tile offsets from the expert offsets, by one CTA of kTileScanThreads threads: tile_offsets[e]
// = sum over e' < e of ceil(rows_e' / tile_pairs), tile_offsets[E] the total. Shared by the tile
// offsets kernel and the grouping's scan kernel.
#pragma once
#include <cub/block/block_scan.cuh>

#include <cstdint>

namespace strata::cuda {

inline constexpr int kTileScanThreads = 1024;
using TileScan = cub::BlockScan<int32_t, kTileScanThreads>;

// Every thread of the CTA calls it; expert_offsets must be visible to all of them.
__device__ inline void block_tile_offsets(const int32_t* expert_offsets, int64_t n_expert, int tile_pairs,
                                          int32_t* tile_offsets, TileScan::TempStorage& temp) {
  int32_t carried = 0;
  for (int64_t base = 0; base < n_expert; base += kTileScanThreads) {
    const int64_t e = base + threadIdx.x;
    const int32_t rows = (e < n_expert) ? expert_offsets[e + 1] - expert_offsets[e] : 0;
    const int32_t tiles = (rows + tile_pairs - 1) / tile_pairs;
    int32_t before = 0, chunk_total = 0;
    TileScan(temp).ExclusiveSum(tiles, before, chunk_total);
    if (e < n_expert) tile_offsets[e] = carried + before;
    carried += chunk_total;
    __syncthreads();  // temp storage reused by the next chunk
  }
  if (threadIdx.x == 0) tile_offsets[n_expert] = carried;
}

}  // namespace strata::cuda
