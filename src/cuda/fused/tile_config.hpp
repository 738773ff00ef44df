// Tile configurations of the fused gate/up + SwiGLU + requant kernel (sm_80 mma.sync path).
// NOTE: a configuration changes speed, never results: every (pair, weight row) accumulator still
// starts at 0.0f and folds the 32-wide k slices of the whole row strictly in order, whatever the
// tile, so h and its codes are the same bits under every configuration.
#pragma once

namespace strata::cuda::fused {

// kFeatures h features per CTA: 2 * kFeatures weight rows, gate and up interleaved per 8 features
// (in each m16 tile, rows 0-7 are gate rows and rows 8-15 the up rows of the same 8 features).
template <int Features, int Pairs, int WarpsM, int WarpsN, int ActStages, int MinBlocksPerSm>
struct FusedTile {
  static constexpr int kFeatures = Features;         // h features per CTA tile
  static constexpr int kWeightRows = 2 * Features;   // gate + up rows in shared memory
  static constexpr int kPairs = Pairs;               // routed (token, slot) pairs per CTA tile
  static constexpr int kWarpsM = WarpsM;             // warps along features
  static constexpr int kWarpsN = WarpsN;             // warps along pairs
  static constexpr int kThreads = 32 * WarpsM * WarpsN;
  static constexpr int kActStages = ActStages;       // cp.async stages of activation codes in flight
  static constexpr int kMinBlocksPerSm = MinBlocksPerSm;
  static constexpr int kStageValues = 64;            // K values per stage (two 32-wide slices)
  static constexpr int kStageSubs = kStageValues / 32;
  // 64 + 16 bytes: the 8 rows a fragment load touches land on disjoint banks without a swizzle.
  static constexpr int kRowStrideBytes = kStageValues + 16;
  static constexpr int kWarpRows = kWeightRows / kWarpsM;   // 64: one 32-feature requant block
  static constexpr int kWarpPairs = kPairs / kWarpsN;
  static constexpr int kMmaM = kWarpRows / 16;              // m16 tiles per warp (4)
  static constexpr int kMmaN = kWarpPairs / 8;              // n8 tiles per warp
  static constexpr int kActChunks = kPairs * (kStageValues / 16);  // 16-byte copies per stage

  static_assert(kWarpRows == 64, "a warp owns exactly one 32-feature requant block (gate + up rows)");
  static_assert(kFeatures % 32 == 0, "whole requant blocks per CTA");
  static_assert(kPairs % (8 * kWarpsN) == 0, "warp pairs must be whole n8 tiles");
  static_assert(kStageValues % 32 == 0 && kStageSubs == 2, "stages hold two 32-value slices");
  static_assert(kRowStrideBytes % 16 == 0, "shared rows take 16-byte stores and cp.async");
  static_assert(kActChunks <= kThreads, "one activation copy per thread and stage");
  static_assert(kActStages >= 2, "cp.async needs at least double buffering");
  static_assert(kThreads <= 1024 && kMinBlocksPerSm >= 1, "launchable");
};

// Many pairs per expert: 64 features x 64 pairs, 8 warps of 64 rows x 16 pairs.
using FusedLarge = FusedTile<64, 64, 2, 4, 4, 2>;
// Few pairs per expert (skewed or sparse routing, small T): 16 pairs, so an expert with 3 rows
// pays a 16-pair tile of MMA and activation traffic, not 64; 8 warps of 64 rows x 8 pairs.
using FusedSmall = FusedTile<128, 16, 4, 2, 4, 2>;

// Mean pairs per expert below which the small tile wastes less of each CTA on padding.
inline constexpr double kFusedSmallTileMeanPairs = 40.0;

}  // namespace strata::cuda::fused
