// Which expert a pair tile belongs to, from the device-built tile offsets (launch_tile_offsets):
// the persistent GEMM and fused kernels turn a work item's tile index into its expert with it.
#pragma once
#include <cstdint>

#include "common/hd.hpp"

namespace strata::cuda {

// Last index i in [0, n) with tile_offsets[i] <= tile (tile_offsets ascending, tile_offsets[0] <= tile).
STRATA_HD_INLINE int expert_of_tile(const int32_t* tile_offsets, int n, int32_t tile) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (tile_offsets[mid] <= tile)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace strata::cuda
