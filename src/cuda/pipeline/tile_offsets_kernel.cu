#include "cuda/common/check.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "cuda/pipeline/tile_offsets.cuh"

namespace strata::cuda {
namespace {

// One CTA: exclusive scan over experts of ceil(rows_e / tile_pairs), in chunks of 1024 experts.
__global__ void __launch_bounds__(kTileScanThreads)
    tile_offsets_kernel(const int32_t* __restrict__ expert_offsets,  // [E + 1]
                        int64_t n_expert, int tile_pairs,
                        int32_t* __restrict__ tile_offsets) {        // [E + 1]
  __shared__ TileScan::TempStorage temp;
  block_tile_offsets(expert_offsets, n_expert, tile_pairs, tile_offsets, temp);
}

}  // namespace

void launch_tile_offsets(const int32_t* expert_offsets, int64_t n_expert, int tile_pairs, int32_t* tile_offsets,
                         cudaStream_t stream) {
  tile_offsets_kernel<<<1, kTileScanThreads, 0, stream>>>(expert_offsets, n_expert, tile_pairs, tile_offsets);
  STRATA_CUDA_CHECK_LAUNCH("tile_offsets_kernel");
}

}  // namespace strata::cuda
