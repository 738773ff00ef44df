// Arguments and tile of the q10 wmma kernels (wmma_q10_kernel.cuh): no GPU runtime header, so the
// HIP object check includes them too.
// NOTE: a tile changes speed, never results: every (pair, weight row) accumulator starts at 0.0f
// and folds its spans strictly in k order whatever the tile, and h is requantised per 64 features
// by quantize_block_q10 itself.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cuda/mma/mma_tile_16_layout.hpp"
#include "pipeline/arith_q10.hpp"

namespace strata::cuda::fused_q10 {

struct WmmaQ10Args {
  const uint8_t* weights[2] = {nullptr,
                               nullptr};   // gate, up: [E, f, d] blocks; down: [E, d, f] in [0]
  size_t expert_stride_bytes[2] = {0, 0};  // bytes from expert e to e + 1, per tensor
  size_t row_bytes = 0;                    // bytes per weight row (both tensors alike)
  int in_features = 0;                     // K: d for gate/up, f for down; a multiple of 64
  int out_features = 0;                    // f (h features) for gate/up, d for down
  const uint16_t* act_codes = nullptr;     // [rows, K] f16 code bits, rows 16-byte aligned
  const float* act_scales = nullptr;       // [rows, K/64] f32
  const int32_t* act_row = nullptr;        // [P] activation row of each sorted pair; null: the pair
  const int32_t* expert_offsets = nullptr;  // [E + 1] sorted pairs of expert e
  const int32_t* tile_offsets = nullptr;    // [E + 1] pair tiles (of the tile's kPairs) before e
  int n_expert = 0;
  // gate/up + SwiGLU + requant outputs (sorted-pair rows)
  uint16_t* h_codes = nullptr;  // [P, f] f16 code bits
  float* h_scales = nullptr;    // [P, f/64] f32
  int32_t* h_sums = nullptr;    // [P, f/16] int32
  float* h_out = nullptr;       // [P, f] f32 before requantisation, or null
  float* gate_out = nullptr;    // [P, f] f32, or null
  float* up_out = nullptr;      // [P, f] f32, or null
  // down output
  float* rows_out = nullptr;  // [P, d] f32 sorted-pair rows
};

// kWeightRows x kPairs outputs per work item (gate/up: kWeightRows / 2 features of gate, then the
// same features of up); K staged one 64-value activation block at a time, double-buffered, in
// plain row-major f16 tiles (lda = ldb = kStageValues).
template <int WeightRows, int Pairs, int WarpsAlongWeights, int WarpsAlongPairs>
struct WmmaQ10Tile {
  static constexpr int kWeightRows = WeightRows;  // weight rows per item (gate+up, or down)
  static constexpr int kPairs = Pairs;            // routed (token, slot) pairs per item
  static constexpr int kWarpsM = WarpsAlongWeights;
  static constexpr int kWarpsN = WarpsAlongPairs;
  static constexpr int kWarps = kWarpsM * kWarpsN;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kStageValues = kQ10BlockValues;  // K per stage: one activation block
  static constexpr int kWarpRows = kWeightRows / kWarpsM;
  static constexpr int kWarpPairs = kPairs / kWarpsN;
  static constexpr int kTilesM =
      kWarpRows / strata::mma::kTile16;  // 16x16 tiles per warp along rows
  static constexpr int kTilesN = kWarpPairs / strata::mma::kTile16;  // ... and along pairs
  static constexpr int kOutStride = kWeightRows + 4;  // fp32 out tile row stride (pairs x rows)

  static_assert(kWarpRows % strata::mma::kTile16 == 0 && kWarpPairs % strata::mma::kTile16 == 0,
                "whole 16x16 tiles per warp");
  static_assert((kWeightRows / 2) % kQ10BlockValues == 0,
                "gate/up: whole 64-feature requant blocks per item");
  static_assert(kStageValues % 8 == 0, "lda, ldb multiples of 8 (f16 wmma)");
  static_assert(kThreads <= 1024, "launchable");
};

// 128 weight rows (64 gate + 64 up features, or 128 down rows) x 32 pairs, 4 warps of 32 rows x
// 32 pairs.
using WmmaQ10TileDefault = WmmaQ10Tile<128, 32, 4, 1>;

}  // namespace strata::cuda::fused_q10
