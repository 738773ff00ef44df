#include <cub/block/block_scan.cuh>

#include "cuda/common/check.hpp"
#include "cuda/pipeline/grouping.hpp"

namespace strata::cuda {
namespace {

constexpr int kScanThreads = 1024;

// One CTA: exclusive scan over experts of ceil(rows_e / tile_pairs), in chunks of 1024 experts.
__global__ void __launch_bounds__(kScanThreads)
    tile_offsets_kernel(const int32_t* __restrict__ expert_offsets,  // [E + 1]
                        int64_t n_expert, int tile_pairs,
                        int32_t* __restrict__ tile_offsets) {        // [E + 1]
  using Scan = cub::BlockScan<int32_t, kScanThreads>;
  __shared__ typename Scan::TempStorage temp;
  int32_t carried = 0;
  for (int64_t base = 0; base < n_expert; base += kScanThreads) {
    const int64_t e = base + threadIdx.x;
    const int32_t rows = (e < n_expert) ? expert_offsets[e + 1] - expert_offsets[e] : 0;
    const int32_t tiles = (rows + tile_pairs - 1) / tile_pairs;
    int32_t before = 0, chunk_total = 0;
    Scan(temp).ExclusiveSum(tiles, before, chunk_total);
    if (e < n_expert) tile_offsets[e] = carried + before;
    carried += chunk_total;
    __syncthreads();  // temp storage reused by the next chunk
  }
  if (threadIdx.x == 0) tile_offsets[n_expert] = carried;
}

}  // namespace

void launch_tile_offsets(const int32_t* expert_offsets, int64_t n_expert, int tile_pairs, int32_t* tile_offsets,
                         cudaStream_t stream) {
  tile_offsets_kernel<<<1, kScanThreads, 0, stream>>>(expert_offsets, n_expert, tile_pairs, tile_offsets);
  STRATA_CUDA_CHECK_LAUNCH("tile_offsets_kernel");
}

}  // namespace strata::cuda
