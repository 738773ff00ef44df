// Tile configurations of the q10 fused kernels (sm_80 path: mma.sync m16n8k16 f16).
// NOTE: a configuration changes speed, never results: every (pair, weight row) accumulator starts
// at 0.0f and folds its spans strictly in k order whatever the tile, and h is requantised per 64
// features by the exact operations of quantize_block_q10.
#pragma once

namespace strata::cuda::fused_q10 {

// WeightRows weight rows x Pairs routed pairs per CTA; K walked in stages of one 64-value
// activation block. For gate/up the rows are gate and up interleaved per 8 features (in each m16
// tile rows 0-7 gate, rows 8-15 the up rows of the same features), so WeightRows / 2 features.
// RawStaged: the weights' raw blocks reach shared memory by cp.async, kRawStageValues values of every
// row at a time in two slots, issued with the activation stage before the first weight stage they
// hold, and the decode reads them there; else the decode reads them from global memory.
template <int WeightRows, int Pairs, int WarpsM, int WarpsN, int ActStages, int MinBlocksPerSm, bool RawStaged = false>
struct Q10Tile {
  static constexpr int kWeightRows = WeightRows;  // weight rows in shared memory
  static constexpr int kPairs = Pairs;            // routed pairs per CTA tile
  static constexpr int kWarpsM = WarpsM;          // warps along weight rows
  static constexpr int kWarpsN = WarpsN;          // warps along pairs
  static constexpr int kThreads = 32 * WarpsM * WarpsN;
  static constexpr int kActStages = ActStages;  // cp.async stages of activation codes in flight
  static constexpr int kMinBlocksPerSm = MinBlocksPerSm;
  static constexpr int kStageValues = 64;  // K values per stage: one activation block
  // 64 + 8 f16 (144 bytes): the 8 rows one fragment load touches land on disjoint banks.
  static constexpr int kRowStrideHalves = kStageValues + 8;
  static constexpr int kWarpRows = kWeightRows / kWarpsM;
  static constexpr int kWarpPairs = kPairs / kWarpsN;
  static constexpr int kMmaM = kWarpRows / 16;                         // m16 tiles per warp
  static constexpr int kMmaN = kWarpPairs / 8;                         // n8 tiles per warp
  static constexpr int kActChunks = kPairs * (kStageValues * 2 / 16);  // 16-byte copies per stage
  static constexpr bool kRawStaged = RawStaged;
  static constexpr int kRawStageValues = 256;  // whole blocks of every format (32 to 256 values)
  static constexpr int kStagesPerRaw = kRawStageValues / kStageValues;
  static constexpr int kRawSlots = 2;

  static_assert(kWarpRows == 64,
                "a warp owns 64 weight rows: 32 features of gate + up, half a requant block");
  static_assert(kWarpsM % 2 == 0, "two warps along M make one 64-feature requant block of h");
  static_assert(kWeightRows % 128 == 0, "whole 64-feature requant blocks per CTA (gate/up)");
  static_assert(kPairs % (8 * kWarpsN) == 0 && kMmaN >= 1, "warp pairs must be whole n8 tiles");
  static_assert((kRowStrideHalves * 2) % 16 == 0, "shared rows take 16-byte stores and cp.async");
  static_assert(((kRowStrideHalves * 2 / 4) % 32) == 4,
                "row stride of 36 words: conflict-free fragments");
  static_assert(kActStages >= 2, "cp.async needs at least double buffering");
  static_assert(kThreads <= 1024 && kMinBlocksPerSm >= 1, "launchable");
};

// Many pairs per expert: 128 weight rows (64 features) x 64 pairs, 8 warps of 64 rows x 16 pairs.
using Q10Large = Q10Tile<128, 64, 2, 4, 4, 2>;
// The many-pair tile with its raw blocks staged in shared memory (3 activation stages make room
// for them). Launched instead of Q10Large for gate/up where the format's raw stage fits (kQ10Staged)
// and the device runs as many of its CTAs at once as of Q10Large's.
using Q10LargeStaged = Q10Tile<128, 64, 2, 4, 3, 2, true>;
// Few pairs per expert: 256 weight rows x 16 pairs, 8 warps of 64 rows x 8 pairs.
using Q10Small = Q10Tile<256, 16, 4, 2, 4, 2>;

// Mean pairs per expert below which the small tile runs. Measured with the staged many-pair gate/up
// tile (H100, IQ3_S + Q2_0, bench/results/2026-12-06.md, call 60): at a mean of 32 (qwen3-30b at
// T = 512, qwen35-a3b at 1024) the many-pair tile takes 0.61x the small one's layer time, at 16
// (qwen35-a3b at T = 512) 0.96x; below 16 its 64 pairs are mostly padding.
inline constexpr double kQ10SmallTileMeanPairs = 16.0;
// The Hopper kernels: mean pairs per expert from which the 128-pair tile (one weight decode for
// twice the pairs) runs. Measured (H200, bench/results/2026-12-02-half-items.md): at a mean of 80
// (flash-next, T = 4096) the 128-pair tile takes 0.72x the 64-pair one's layer time; at 16
// (qwen35-a3b, T = 512) the 64-pair tile runs. From 64 a consumer's m64 row tile is full on average.
inline constexpr double kHopperQ10LargeTileMeanPairs = 64.0;

}  // namespace strata::cuda::fused_q10
