// The q10 wmma kernels: gate/up + SwiGLU + h requantised per 64 features (GateUpOp) or down
// (DownOp) of every routed pair on the 16x16x16 f16 tile primitive, one source for nvcc and for
// clang's HIP (gfx1100).
//
// A persistent grid walks the work items (pair tile of an expert's sorted pairs x block of output
// columns) from the grouping tables, as the other q10 kernels do. Per item and per 64-value K
// stage (one activation block):
//   - every weight row's spans are decoded by the format's wide decode (WidePiece<F>: integer w,
//     |w| <= W_f, one scale per (row, span)) into a plain row-major f16 tile, the pairs' f16
//     activation codes gathered into another (pairs x 64, B col-major), double-buffered: the next
//     stage is loaded while this one is multiplied;
//   - per span of S values, each warp chains S/16 tile products from a fresh accumulator
//     (SpanMma<F>::step_tile16: the exact integer span dot, the 2^24 guard at compile time) per
//     16x16 tile, stores it (ld = 16) and folds every element with fold_span<F>, spans in k order.
// The fp32 tile then goes through shared memory (aliasing the spent stage buffers) to the
// epilogue: SwiGLU and quantize_block_q10 per (pair, 64 features), or one fp32 row per pair.
// NOTE: no split-K, no reordering of spans, and the requant is quantize_block_q10 itself: gate,
// up, h codes and down rows are bitwise the q10 CPU arms'.
#pragma once
#include <cstdint>

#include "cuda/fused_q10/wide_piece.hpp"
#include "cuda/fused_q10/wmma_q10_args.hpp"
#include "cuda/fused_wmma/chain_ops.hpp"
#include "cuda/fused_wmma/chain_stage.hpp"
#include "cuda/mma/span_mma.cuh"
#include "cuda/pipeline/tile_lookup.hpp"
#include "formats/format.hpp"
#include "hip/portability.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/arith_q10.hpp"

namespace strata::cuda::fused_q10 {

using fused_wmma::DownOp;
using fused_wmma::GateUpOp;

// One K stage of a work item: weight rows x 64 and pairs x 64 f16 code bits, plain row-major.
template <class F, class Tile>
struct WmmaQ10Stage {
  static constexpr int kSpans = Tile::kStageValues / F::kWideSpan;
  alignas(32) uint16_t weights[Tile::kWeightRows][Tile::kStageValues];  // [row][k]: A, lda 64
  alignas(32) uint16_t acts[Tile::kPairs][Tile::kStageValues];  // [pair][k]: B col-major, ldb 64
  float weight_scale[Tile::kWeightRows][kSpans];                // [row][span] f32
  float act_scale[Tile::kPairs];                                // [pair] f32: the stage's block
};

// What the epilogue keeps in shared memory (gate/up: kWeightRows / 2 features per pair).
template <class Tile>
struct WmmaQ10Epilogue {
  static constexpr int kFeatures = Tile::kWeightRows / 2;
  float out[Tile::kPairs][Tile::kOutStride];               // [pair][weight row] f32
  float h[Tile::kPairs][kFeatures];                        // [pair][feature] swiglu
  int16_t codes[Tile::kPairs][kFeatures];                  // [pair][feature] h codes
  float scale[Tile::kPairs][kFeatures / kQ10BlockValues];  // [pair][block] h scales
  int32_t sums[Tile::kPairs][kFeatures / kQ10SumValues];   // [pair][16 values] code sums
};

template <class F, class Tile>
struct WmmaQ10Shared {
  union Buffers {
    WmmaQ10Stage<F, Tile> stage[2];  // the main loop's double-buffered K stages
    WmmaQ10Epilogue<Tile> epilogue;  // after the main loop (the stages are spent)
  } buf;
  alignas(32) float scratch[Tile::kWarps][strata::mma::kTile16Elems];  // [warp][16 x 16] f32, ld 16
  int32_t act_row[Tile::kPairs];  // activation row per pair, -1: none
};

// The weight rows of one work item: shared row r is row first + r % split of gate (r < split) or
// up (gate/up: split = kWeightRows / 2; down: split = kWeightRows, one tensor), and no row at all
// (zero weights, zero scale) past `limit`.
struct Q10WeightRows {
  const uint8_t* gate = nullptr;  // the expert's first row of gate (or down)
  const uint8_t* up = nullptr;    // ... of up (gate/up only)
  size_t row_bytes = 0;
  int split = 0;
  int first = 0;
  int limit = 0;

  __device__ __forceinline__ const uint8_t* row(int r) const {
    const int index = first + r % split;
    if (index >= limit) return nullptr;
    return (r < split ? gate : up) + static_cast<size_t>(index) * row_bytes;
  }
};

// Eight f16 values as one 16-byte store.
struct alignas(16) F16x8 {
  uint32_t words[4];
};

// Decodes stage `stage` of every weight row and gathers the pairs' codes and scales into `st`.
template <class F, class Tile>
__device__ __forceinline__ void load_q10_stage(int tid, const Q10WeightRows& rows,
                                               const int32_t* act_row /*[kPairs]*/,
                                               const WmmaQ10Args& args, int stage,
                                               WmmaQ10Stage<F, Tile>& st) {
  using Piece = WidePiece<F>;
  constexpr int S = F::kWideSpan;
  constexpr int kSpans = WmmaQ10Stage<F, Tile>::kSpans;
  constexpr int kTasks = Tile::kWeightRows * kSpans * Piece::kPiecesPerSpan;
  static_assert(Piece::kValues % 8 == 0, "whole 16-byte chunks per piece");
  const int K = args.in_features;
  for (int task = tid; task < kTasks; task += Tile::kThreads) {
    const int r = task / (kSpans * Piece::kPiecesPerSpan);
    const int sp = task / Piece::kPiecesPerSpan % kSpans, piece = task % Piece::kPiecesPerSpan;
    int16_t w[Piece::kValues];
    WideScale scale{0.0f, 0.0f};
    const uint8_t* row = rows.row(r);
    if (row != nullptr) {
      const int k_value = stage * Tile::kStageValues + sp * S;
      Piece::decode(row + static_cast<size_t>(k_value / F::kBlockValues) * F::kBlockBytes,
                    (k_value % F::kBlockValues) / S, piece, w, scale);
    } else {
#pragma unroll
      for (int i = 0; i < Piece::kValues; ++i) w[i] = 0;
    }
    uint16_t* dst = &st.weights[r][sp * S + piece * Piece::kValues];
#pragma unroll
    for (int q = 0; q < Piece::kValues / 8; ++q) {
      F16x8 chunk;
#pragma unroll
      for (int j = 0; j < 4; ++j)  // int16 -> f16 is exact for |w| <= 2048
        chunk.words[j] =
            static_cast<uint32_t>(strata::mma::f16_bits_of_int(w[8 * q + 2 * j])) |
            (static_cast<uint32_t>(strata::mma::f16_bits_of_int(w[8 * q + 2 * j + 1])) << 16);
      *reinterpret_cast<F16x8*>(dst + 8 * q) = chunk;
    }
    if (piece == 0) st.weight_scale[r][sp] = scale.scale;
  }
  constexpr int kChunksPerPair = Tile::kStageValues * 2 / 16;
  for (int task = tid; task < Tile::kPairs * kChunksPerPair; task += Tile::kThreads) {
    const int p = task / kChunksPerPair, part = task % kChunksPerPair;
    const int32_t a_row = act_row[p];
    uint16_t* dst = &st.acts[p][8 * part];
    if (a_row >= 0)
      fused_wmma::copy16(dst, args.act_codes + static_cast<int64_t>(a_row) * K +
                                  stage * Tile::kStageValues + 8 * part);
    else
      fused_wmma::zero16(dst);
  }
  const int blocks_per_row = K / kQ10BlockValues;
  for (int p = tid; p < Tile::kPairs; p += Tile::kThreads) {
    const int32_t a_row = act_row[p];
    st.act_scale[p] =
        a_row >= 0 ? args.act_scales[static_cast<int64_t>(a_row) * blocks_per_row + stage] : 0.0f;
  }
}

template <class F, class Op, class Tile>
__global__ void __launch_bounds__(Tile::kThreads) wmma_q10_kernel(const WmmaQ10Args args) {
  static_assert(WideBlockFormat<F>, "the q10 kernels read the format's wide decode");
  static_assert(!F::kHasOffset,
                "offset formats need the activation span sums in the fold (not carried yet)");
  static_assert(Tile::kStageValues % F::kWideSpan == 0, "whole spans per stage");
  static_assert(
      F::kBlockValues % Tile::kStageValues == 0 || Tile::kStageValues % F::kBlockValues == 0,
      "stages and blocks nest");
  using Span = mma::SpanMma<F>;  // NOTE: refuses formats whose span could reach 2^24
  using Shared = WmmaQ10Shared<F, Tile>;
  static_assert(sizeof(Shared) <= 48 * 1024, "static shared memory");
  constexpr int S = F::kWideSpan;
  constexpr int kSpans = WmmaQ10Stage<F, Tile>::kSpans;
  constexpr int kColumns = fused_wmma::kItemColumns<Op, Tile>;
  __shared__ Shared sm;

  const int K = args.in_features;
  const int n_stages = K / Tile::kStageValues;
  const int col_blocks = (args.out_features + kColumns - 1) / kColumns;
  const int64_t n_items = static_cast<int64_t>(args.tile_offsets[args.n_expert]) * col_blocks;

  const int tid = gpu::thread_x();
  const int warp = tid / 32, lane = tid % 32;
  const int warp_m = warp % Tile::kWarpsM, warp_n = warp / Tile::kWarpsM;

  for (int64_t item = gpu::block_x(); item < n_items; item += gpu::grid_dim_x()) {
    // ---- which expert, pairs and output columns ------------------------------------------
    const auto tile = static_cast<int32_t>(item / col_blocks);
    const int column_begin = static_cast<int>(item % col_blocks) * kColumns;
    const int expert = expert_of_tile(args.tile_offsets, args.n_expert + 1, tile);
    const int32_t pair_begin =
        args.expert_offsets[expert] + (tile - args.tile_offsets[expert]) * Tile::kPairs;
    const int32_t pairs_left = args.expert_offsets[expert + 1] - pair_begin;
    const int pair_count = pairs_left < Tile::kPairs ? static_cast<int>(pairs_left) : Tile::kPairs;
    Q10WeightRows rows;
    rows.gate = args.weights[0] + static_cast<size_t>(expert) * args.expert_stride_bytes[0];
    if constexpr (Op::kTensors == 2)
      rows.up = args.weights[1] + static_cast<size_t>(expert) * args.expert_stride_bytes[1];
    rows.row_bytes = args.row_bytes;
    rows.split = kColumns;
    rows.first = column_begin;
    rows.limit = args.out_features;

    gpu::sync_block();  // the previous item's readers are done with every shared buffer
    for (int p = tid; p < Tile::kPairs; p += Tile::kThreads)
      sm.act_row[p] =
          p < pair_count ? (args.act_row != nullptr ? args.act_row[pair_begin + p] : pair_begin + p)
                         : -1;
    gpu::sync_block();

    // acc[tm][tn][i]: weight row warp_m*kWarpRows + 16*tm + owned_row(lane, i),
    //                 pair warp_n*kWarpPairs + 16*tn + owned_col(lane, i).
    float acc[Tile::kTilesM][Tile::kTilesN][strata::mma::kOwnedPerLane];
#pragma unroll
    for (int tm = 0; tm < Tile::kTilesM; ++tm)
#pragma unroll
      for (int tn = 0; tn < Tile::kTilesN; ++tn)
#pragma unroll
        for (int i = 0; i < strata::mma::kOwnedPerLane; ++i) acc[tm][tn][i] = 0.0f;

    load_q10_stage<F, Tile>(tid, rows, sm.act_row, args, 0, sm.buf.stage[0]);
    gpu::sync_block();
    for (int stage = 0; stage < n_stages; ++stage) {
      const int buf = stage & 1;
      if (stage + 1 < n_stages)
        load_q10_stage<F, Tile>(tid, rows, sm.act_row, args, stage + 1, sm.buf.stage[buf ^ 1]);
      const WmmaQ10Stage<F, Tile>& st = sm.buf.stage[buf];

      // ---- per span: S/16 chained tile products, then the fold of every element -------------
#pragma unroll
      for (int sp = 0; sp < kSpans; ++sp) {
#pragma unroll
        for (int tm = 0; tm < Tile::kTilesM; ++tm) {
#pragma unroll
          for (int tn = 0; tn < Tile::kTilesN; ++tn) {
            const int row0 = warp_m * Tile::kWarpRows + strata::mma::kTile16 * tm;
            const int pair0 = warp_n * Tile::kWarpPairs + strata::mma::kTile16 * tn;
            strata::mma::Tile16F16::Acc dot;
            // NOTE: not unrolled: it keeps one step's fragments live (no spills on sm_80).
#pragma unroll 1
            for (int step = 0; step < Span::kSteps; ++step) {
              const int k = sp * S + 16 * step;
              Span::step_tile16(
                  dot,
                  reinterpret_cast<const strata::mma::Half*>(
                      &st.weights[0][0] + strata::mma::a_index(row0, k, Tile::kStageValues)),
                  Tile::kStageValues,
                  reinterpret_cast<const strata::mma::Half*>(
                      &st.acts[0][0] + strata::mma::b_index(k, pair0, Tile::kStageValues)),
                  Tile::kStageValues, step);
            }
            strata::mma::Tile16F16::store(sm.scratch[warp], dot);
            gpu::sync_wave();
#pragma unroll
            for (int i = 0; i < strata::mma::kOwnedPerLane; ++i) {
              const int m = strata::mma::owned_row(lane, i), n = strata::mma::owned_col(lane, i);
              const WideScale w{st.weight_scale[row0 + m][sp], 0.0f};
              acc[tm][tn][i] =
                  fold_span<F>(acc[tm][tn][i], sm.scratch[warp][strata::mma::c_index(m, n)], 0.0f,
                               w, st.act_scale[pair0 + n]);
            }
            gpu::sync_wave();  // the scratch tile is read before the next store
          }
        }
      }
      gpu::sync_block();  // stage `buf` fully read; stage buf ^ 1 fully written
    }

    // ---- fp32 results to shared, [pair][weight row] (over the spent stage buffers) ----------
    WmmaQ10Epilogue<Tile>& ep = sm.buf.epilogue;
#pragma unroll
    for (int tm = 0; tm < Tile::kTilesM; ++tm)
#pragma unroll
      for (int tn = 0; tn < Tile::kTilesN; ++tn)
#pragma unroll
        for (int i = 0; i < strata::mma::kOwnedPerLane; ++i) {
          const int row = warp_m * Tile::kWarpRows + strata::mma::kTile16 * tm +
                          strata::mma::owned_row(lane, i);
          const int pair = warp_n * Tile::kWarpPairs + strata::mma::kTile16 * tn +
                           strata::mma::owned_col(lane, i);
          ep.out[pair][row] = acc[tm][tn][i];
        }
    gpu::sync_block();

    if constexpr (Op::kSwiglu) {
      // ---- epilogue: SwiGLU, then quantize_block_q10 per (pair, 64-feature block) -------------
      const int f = args.out_features;
      constexpr int kFeatures = WmmaQ10Epilogue<Tile>::kFeatures;
      constexpr int kBlocks = kFeatures / kQ10BlockValues;
      static_assert(kColumns == kFeatures, "gate rows, then the up rows of the same features");
      for (int task = tid; task < Tile::kPairs * kFeatures; task += Tile::kThreads) {
        const int p = task / kFeatures, i = task % kFeatures;
        ep.h[p][i] = swiglu(ep.out[p][i], ep.out[p][kFeatures + i]);
      }
      gpu::sync_block();
      for (int task = tid; task < Tile::kPairs * kBlocks; task += Tile::kThreads) {
        const int p = task / kBlocks, b = task % kBlocks;
        const int feature_base = column_begin + kQ10BlockValues * b;
        if (p >= pair_count || feature_base >= f) continue;
        // NOTE: the CPU arms' requant itself (pipeline/arith_q10.hpp), on the shared rows.
        quantize_block_q10(&ep.h[p][kQ10BlockValues * b],
                           q10_block_values(f, feature_base / kQ10BlockValues),
                           &ep.codes[p][kQ10BlockValues * b], &ep.scale[p][b],
                           &ep.sums[p][kQ10BlockValues / kQ10SumValues * b]);
      }
      gpu::sync_block();
      const int64_t n_blocks64 = q10_blocks_per_row(f);
      for (int task = tid; task < Tile::kPairs * kFeatures; task += Tile::kThreads) {
        const int p = task / kFeatures, i = task % kFeatures;
        const int feature = column_begin + i;
        if (p >= pair_count || feature >= f) continue;
        const int64_t at = (static_cast<int64_t>(pair_begin) + p) * f + feature;
        args.h_codes[at] = strata::mma::f16_bits_of_int(ep.codes[p][i]);
        if (args.h_out != nullptr) args.h_out[at] = ep.h[p][i];
        if (args.gate_out != nullptr) args.gate_out[at] = ep.out[p][i];
        if (args.up_out != nullptr) args.up_out[at] = ep.out[p][kFeatures + i];
      }
      for (int task = tid; task < Tile::kPairs * kBlocks; task += Tile::kThreads) {
        const int p = task / kBlocks, b = task % kBlocks;
        const int feature_base = column_begin + kQ10BlockValues * b;
        if (p >= pair_count || feature_base >= f) continue;
        const int64_t row = static_cast<int64_t>(pair_begin) + p;
        args.h_scales[row * n_blocks64 + feature_base / kQ10BlockValues] = ep.scale[p][b];
        const int n_sums = q10_block_values(f, feature_base / kQ10BlockValues) / kQ10SumValues;
        for (int j = 0; j < n_sums; ++j)
          args.h_sums[row * (f / kQ10SumValues) + feature_base / kQ10SumValues + j] =
              ep.sums[p][kQ10BlockValues / kQ10SumValues * b + j];
      }
    } else {
      // ---- epilogue: one fp32 row per sorted pair, coalesced along the output columns -------
      const int d = args.out_features;
      for (int task = tid; task < Tile::kPairs * kColumns; task += Tile::kThreads) {
        const int p = task / kColumns, r = task % kColumns;
        if (p < pair_count && column_begin + r < d)
          args.rows_out[(static_cast<int64_t>(pair_begin) + p) * d + column_begin + r] =
              ep.out[p][r];
      }
    }
  }
}

}  // namespace strata::cuda::fused_q10
