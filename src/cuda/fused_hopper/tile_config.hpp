// Tile configurations of the fused-hopper kernels (sm_90a).
// NOTE: a configuration changes speed, never results: every (pair, weight row) accumulator starts
// at 0.0f and folds the 32-wide k slices of the whole row strictly in order, whatever the tile.
#pragma once
#include <cstddef>

namespace strata::cuda::fused_hopper {

// One CTA: a producer warpgroup (its 128 threads issue the bulk copies) and two consumer warpgroups. Both consumers multiply all kPairs pairs of the tile; consumer c owns weight
// columns [c * kWgCols, (c + 1) * kWgCols) of the CTA's 2 * kWgCols: it decodes them into its own
// part of the shared B tile and holds their accumulators (kPairs / 64 wgmma row tiles of m64 x
// n kWgCols). Gate/up interleave their rows per feature (column 2i gate, 2i + 1 up of feature i),
// so a lane holds gate and up of the same (pair, feature) and SwiGLU needs no exchange.
template <class F, int Ops, int StageValues, int Pairs, int WgCols, int Stages>
struct HopperTile {
  static constexpr int kOps = Ops;                  // 2: gate + up interleaved; 1: down
  static constexpr int kStageValues = StageValues;  // K values per pipeline stage
  static constexpr int kSubs = StageValues / 32;    // 32-wide k slices per stage (one wgmma each)
  static constexpr int kPairs = Pairs;              // routed pairs per CTA tile (wgmma M)
  static constexpr int kMTiles = Pairs / 64;
  static constexpr int kWgCols = WgCols;            // weight columns per consumer (wgmma N)
  static constexpr int kCtaCols = 2 * WgCols;
  static constexpr int kStages = Stages;            // raw-block + activation stages in flight
  static constexpr int kAccRegs = WgCols / 2;       // s32 / f32 accumulators per m64 tile and thread
  static constexpr int kThreads = 384;              // producer warpgroup + two consumer warpgroups
  // setmaxnreg moves registers between the warpgroups of the CTA; the total stays what the launch
  // gave it (168 per thread at 384 threads and one CTA per SM), or the increase waits for ever.
  static constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = 232;
  // Raw bytes of one row and stage, and the shared slot that holds them from the 16-byte boundary
  // at or below their first byte to the one at or above their last.
  static constexpr int kBlocksPerStage = StageValues / F::kBlockValues;
  static constexpr int kRawBytes = kBlocksPerStage * F::kBlockBytes;
  static constexpr int kRawStride = (kRawBytes + 30 + 15) / 16 * 16;
  // Activation rows: 16 bytes of padding keep the 8 rows an ldmatrix reads on disjoint banks.
  static constexpr int kActStride = StageValues + 16;
  // B tile: core matrices of 8 columns x 16 bytes (128 contiguous bytes); the K-adjacent core
  // matrices of one column group are contiguous (leading offset 128), column groups follow each
  // other (stride offset kStageValues * 8).
  static constexpr int kCoreLeadingBytes = 128;
  static constexpr int kCoreStrideBytes = StageValues * 8;
  static constexpr int kDecodeTasks = WgCols * kSubs / 128;  // sub-blocks per consumer thread and stage

  static_assert(Ops == 1 || Ops == 2, "down alone, or gate and up");
  static_assert(StageValues % F::kBlockValues == 0 && StageValues % 32 == 0, "whole blocks per stage");
  static_assert(Pairs == 64 || Pairs == 128, "one or two m64 row tiles");
  static_assert(WgCols == 64 || WgCols == 128, "wgmma n64 or n128");
  static_assert(Ops == 1 || WgCols % 64 == 0, "a consumer owns whole 32-feature requant blocks");
  static_assert(WgCols * kSubs % 128 == 0, "decode tasks spread evenly over a warpgroup");
  static_assert(128 * kProducerRegisters + 256 * kConsumerRegisters <= kThreads * kLaunchRegisters,
                "setmaxnreg cannot hand out more registers than the launch gave");
  static_assert(Pairs <= 128, "one producer thread per pair");
  static_assert(Stages >= 2, "the producer runs at least one stage ahead");
};

// Stages of 256 values for the gate/up kernel (one IQ3_S block per row); 128 for down when f % 128
// == 0 (two Q2_0 blocks), else 64 (one block, so any f % 64 == 0 runs). Down's short stages keep
// more of them in flight.
inline constexpr int kGateUpStageValues = 256;
inline constexpr int kDownStageValuesWide = 128;
inline constexpr int kDownStageValues = 64;

template <class F, int Ops, int StageValues>
using HopperLarge = HopperTile<F, Ops, StageValues, 128, 64, Ops == 2 ? 3 : 5>;
template <class F, int Ops, int StageValues>
using HopperSmall = HopperTile<F, Ops, StageValues, 64, 128, Ops == 2 ? 2 : 5>;

// Mean pairs per expert below which the 64-pair tile wastes less of each CTA on padding.
inline constexpr double kHopperSmallTileMeanPairs = 96.0;

}  // namespace strata::cuda::fused_hopper
