// Tile configurations of the production grouped GEMM, one table per architecture.
// NOTE: a configuration changes speed, never results: each thread still owns its (pair, weight
// row) outputs over the whole K and folds the 32-wide slices in order, whatever the tile.
#pragma once

namespace strata::cuda::production {

// kWeightRows x kPairs outputs per CTA; K staged kStageValues at a time, double-buffered, the
// next stage's weight bytes held in registers while the current stage is multiplied.
template <int WeightRows, int Pairs, int WarpsM, int WarpsN, int StageValues, int MinBlocksPerSm>
struct GemmTile {
  static constexpr int kWeightRows = WeightRows;   // weight rows (output features) per CTA tile
  static constexpr int kPairs = Pairs;             // routed (token, slot) pairs per CTA tile
  static constexpr int kWarpsM = WarpsM;           // warps along weight rows
  static constexpr int kWarpsN = WarpsN;           // warps along pairs
  static constexpr int kThreads = 32 * WarpsM * WarpsN;
  static constexpr int kMinBlocksPerSm = MinBlocksPerSm;
  static constexpr int kStageValues = StageValues;  // K values per shared-memory stage
  static constexpr int kStageSubs = kStageValues / 32;
  // kStageValues + 16 bytes, an odd number of 16-byte units: the 8 rows one ldmatrix phase
  // reads land on disjoint bank groups without a swizzle.
  static constexpr int kRowStrideBytes = kStageValues + 16;
  static constexpr int kWarpRows = kWeightRows / kWarpsM;  // per warp
  static constexpr int kWarpPairs = kPairs / kWarpsN;      // per warp
  static constexpr int kMmaM = kWarpRows / 16;             // m16 tiles per warp
  static constexpr int kMmaN = kWarpPairs / 8;             // n8 tiles per warp
  static constexpr int kDecodeTasks = kWeightRows * kStageSubs / kThreads;  // sub-blocks per thread per stage

  static_assert(kWeightRows % (16 * kWarpsM) == 0, "warp rows must be whole m16 tiles");
  static_assert(kPairs % (16 * kWarpsN) == 0, "warp pairs must be whole pairs of n8 tiles (ldmatrix.x4)");
  static_assert(kStageValues % 32 == 0 && kStageSubs >= 1, "stages hold whole 32-value slices");
  static_assert((kRowStrideBytes / 16) % 2 == 1 && kRowStrideBytes % 16 == 0, "conflict-free ldmatrix rows");
  static_assert(kWeightRows * kStageSubs % kThreads == 0 && kDecodeTasks >= 1, "weight decode tasks spread evenly");
  static_assert(kThreads <= 1024 && kMinBlocksPerSm >= 1, "launchable");
};

// sm_80 and sm_90 (mma.sync path), chosen by mean pairs per expert (heuristics.hpp):
using TileWide = GemmTile<128, 128, 2, 8, 128, 1>;  // 16 warps, warp tile 64 rows x 16 pairs
using TileLarge = GemmTile<128, 64, 2, 4, 128, 2>;  // 8 warps, warp tile 64 rows x 16 pairs
using TileSmall = GemmTile<128, 32, 8, 1, 128, 2>;  // 8 warps, warp tile 16 rows x 32 pairs

}  // namespace strata::cuda::production
