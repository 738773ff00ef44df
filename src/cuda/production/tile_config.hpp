// Tile configurations of the production grouped GEMM, one table per architecture.
// NOTE: a configuration changes speed, never results: each thread still owns its (pair, weight
// row) outputs over the whole K and folds the 32-wide slices in order, whatever the tile.
#pragma once

namespace strata::cuda::production {

// kWeightRows x kPairs outputs per CTA; K staged kStageValues at a time, double-buffered.
template <int WeightRows, int Pairs, int WarpsM, int WarpsN, int MinBlocksPerSm>
struct GemmTile {
  static constexpr int kWeightRows = WeightRows;   // weight rows (output features) per CTA tile
  static constexpr int kPairs = Pairs;             // routed (token, slot) pairs per CTA tile
  static constexpr int kWarpsM = WarpsM;           // warps along weight rows
  static constexpr int kWarpsN = WarpsN;           // warps along pairs
  static constexpr int kThreads = 32 * WarpsM * WarpsN;
  static constexpr int kMinBlocksPerSm = MinBlocksPerSm;
  static constexpr int kStageValues = 64;          // K values per shared-memory stage (2 slices)
  static constexpr int kStageSubs = kStageValues / 32;
  // 64 + 16 bytes: the 8 rows a fragment load touches land on disjoint banks without a swizzle.
  static constexpr int kRowStrideBytes = kStageValues + 16;
  static constexpr int kWarpRows = kWeightRows / kWarpsM;  // per warp
  static constexpr int kWarpPairs = kPairs / kWarpsN;      // per warp
  static constexpr int kMmaM = kWarpRows / 16;             // m16 tiles per warp
  static constexpr int kMmaN = kWarpPairs / 8;             // n8 tiles per warp

  static_assert(kWeightRows % (16 * kWarpsM) == 0, "warp rows must be whole m16 tiles");
  static_assert(kPairs % (8 * kWarpsN) == 0, "warp pairs must be whole n8 tiles");
  static_assert(kStageValues % 32 == 0 && kStageSubs >= 1, "stages hold whole 32-value slices");
  static_assert(kRowStrideBytes % 16 == 0, "shared rows are written with 16-byte stores");
  static_assert(kWeightRows * kStageSubs % kThreads == 0, "weight decode tasks spread evenly");
  static_assert(kPairs * (kStageValues / 16) % kThreads == 0 || kPairs * (kStageValues / 16) < kThreads,
                "activation copy tasks spread evenly");
  static_assert(kThreads <= 1024 && kMinBlocksPerSm >= 1, "launchable");
};

// sm_80 and sm_90 (mma.sync path): many pairs per expert, and few (skewed or sparse routing).
using TileLarge = GemmTile<128, 64, 2, 4, 2>;  // 8 warps, warp tile 64 rows x 16 pairs
using TileSmall = GemmTile<128, 32, 8, 1, 2>;  // 8 warps, warp tile 16 rows x 32 pairs

// Mean pairs per expert below which the small tile wastes less of each CTA on padding.
inline constexpr double kSmallTileMeanPairs = 40.0;

}  // namespace strata::cuda::production
