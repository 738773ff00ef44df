// Tile configuration of the wmma chain kernels (gate/up and down on mma_tile_16).
// NOTE: a configuration changes speed, never results: every (pair, weight row) accumulator starts
// at 0.0f and folds the 32-wide k slices of the whole row strictly in order, whatever the tile.
#pragma once
#include "cuda/mma/mma_tile_16_layout.hpp"

namespace strata::cuda::fused_wmma {

// kWeightRows x kPairs outputs per work item; K staged kStageSubs 32-value sub-blocks at a time
// (double-buffered), each sub-block held as two plain 16-wide k tiles.
template <int WeightRows, int Pairs, int WarpsAlongWeights, int WarpsAlongPairs>
struct ChainTile {
  static constexpr int kWeightRows = WeightRows;  // weight rows per item (gate+up, or down)
  static constexpr int kPairs = Pairs;            // routed (token, slot) pairs per item
  static constexpr int kWarpsM = WarpsAlongWeights;
  static constexpr int kWarpsN = WarpsAlongPairs;
  static constexpr int kWarps = kWarpsM * kWarpsN;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kStageSubs = 2;                 // 32-value sub-blocks per stage
  static constexpr int kStageSlices = 2 * kStageSubs;  // 16-wide k tiles per stage
  static constexpr int kWarpRows = kWeightRows / kWarpsM;
  static constexpr int kWarpPairs = kPairs / kWarpsN;
  static constexpr int kTilesM = kWarpRows / mma::kTile16;   // 16x16 tiles per warp along rows
  static constexpr int kTilesN = kWarpPairs / mma::kTile16;  // ... and along pairs
  static constexpr int kOutStride = kWeightRows + 4;  // fp32 out tile row stride (pairs x rows)

  static_assert(kWarpRows % mma::kTile16 == 0 && kWarpPairs % mma::kTile16 == 0,
                "whole 16x16 tiles per warp");
  static_assert(kWeightRows % 2 == 0 && (kWeightRows / 2) % 32 == 0,
                "gate/up: whole 32-feature requant blocks");
  static_assert(kPairs * kStageSlices * mma::kTile16 / 16 <= kThreads,
                "one 16-byte activation copy per thread");
  static_assert(kPairs * kStageSubs <= kThreads, "one activation scale per thread");
  static_assert(kThreads <= 1024, "launchable");
};

// 128 weight rows (64 gate + 64 up features, or 128 down rows) x 32 pairs, 4 warps of 32 rows x
// 32 pairs: the 256 decode tasks of a stage take two passes of the 128 threads.
using ChainTileDefault = ChainTile<128, 32, 4, 1>;

}  // namespace strata::cuda::fused_wmma
