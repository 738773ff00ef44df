// The wmma chain kernel: gate/up + SwiGLU + requant (GateUpOp) or down (DownOp) of every routed
// pair on the 16x16x16 int8 tile primitive, one source for nvcc and for clang's HIP (gfx1100).
//
// A persistent grid walks the work items (row tile of an expert's sorted pairs x block of output
// columns) from the grouping tables, as the other arms do. Per item and per 64-value K stage:
//   - every weight row's two sub-blocks are decoded through the format traits into plain shared
//     tiles (weight rows x 16 k, per 16-wide slice), the pairs' activation codes gathered likewise
//     (pairs x 16 k), double-buffered: the next stage is decoded while this one is multiplied;
//   - per 32-value sub-block, each warp chains mma_tile_16 over its two 16-wide slices into one
//     int32 accumulator per 16x16 tile (the exact dot over 32 values), stores it (ld = 16) and
//     folds every element into fp32 with fold_slice<F>, strictly in sub-block order.
// The fp32 tile then goes through shared memory to the epilogue.
// NOTE: no split-K and no reordering of sub-blocks, and SwiGLU/requant by quantize_block32: gate,
// up, h codes and down rows are bitwise equal to the production arm's and the CPU arms'.
#pragma once
#include <cstdint>

#include "cuda/blocks/epilogue.hpp"
#include "cuda/blocks/product_args.hpp"
#include "cuda/blocks/work_item.hpp"
#include "cuda/fused_wmma/chain_ops.hpp"
#include "cuda/fused_wmma/chain_stage.hpp"
#include "cuda/mma/mma_tile_16.cuh"
#include "formats/format.hpp"
#include "hip/portability.hpp"
#include "pipeline/arith.hpp"

namespace strata::cuda::fused_wmma {

template <class Tile>
struct ChainShared {
  StageTiles<Tile> stage[2];                                     // double-buffered K stages
  alignas(32) int32_t scratch[Tile::kWarps][mma::kTile16Elems];  // [warp][16 x 16] s32, ld 16
  float out[Tile::kPairs][Tile::kOutStride];                     // [pair][weight row] f32 results
  int32_t act_row[Tile::kPairs];  // activation row per pair, -1: none
};

template <class F, class Op, class Tile>
__global__ void __launch_bounds__(Tile::kThreads) native_kernel_wmma(const blocks::ProductArgs args) {
  static_assert(!F::kSplitScales && !F::kHasOffset,
                "one int32 dot per 32-wide slice, no activation-sum term");
  static_assert(F::kBlockValues % kSubBlockValues == 0, "whole 32-value sub-blocks per block");
  constexpr int kColumns = kItemColumns<Op, Tile>;
  __shared__ ChainShared<Tile> sm;

  const int K = args.in_features;
  const int n_subs = K / kSubBlockValues;
  const int n_stages = (n_subs + Tile::kStageSubs - 1) / Tile::kStageSubs;
  const int col_blocks = (args.out_features + kColumns - 1) / kColumns;
  const int64_t n_items = blocks::work_items(args, col_blocks);

  const int tid = gpu::thread_x();
  const int warp = tid / 32, lane = tid % 32;
  const int warp_m = warp % Tile::kWarpsM, warp_n = warp / Tile::kWarpsM;

  for (int64_t item = gpu::block_x(); item < n_items; item += gpu::grid_dim_x()) {
    // ---- which expert, pairs and output columns ------------------------------------------
    const blocks::WorkItem w = blocks::work_item<Tile::kPairs>(args, item, col_blocks);
    const int column_begin = w.column_block * kColumns;
    const int32_t pair_begin = w.pair_begin;
    const int pair_count = w.pair_count;
    WeightRows rows;
    for (int t = 0; t < Op::kTensors; ++t)
      rows.expert_base[t] =
          args.weights[t] + static_cast<size_t>(w.expert) * args.expert_stride_bytes[t];
    rows.row_bytes = args.row_bytes;
    rows.split = kColumns;
    rows.first = column_begin;
    rows.limit = args.out_features;

    gpu::sync_block();  // the previous item's readers are done with every shared buffer
    for (int p = tid; p < Tile::kPairs; p += Tile::kThreads)
      sm.act_row[p] =
          p < pair_count ? static_cast<int32_t>(blocks::pair_act_row(args, pair_begin + p)) : -1;
    gpu::sync_block();

    // acc[tm][tn][i]: weight row warp_m*kWarpRows + 16*tm + owned_row(lane, i),
    //                 pair warp_n*kWarpPairs + 16*tn + owned_col(lane, i).
    float acc[Tile::kTilesM][Tile::kTilesN][mma::kOwnedPerLane];
#pragma unroll
    for (int tm = 0; tm < Tile::kTilesM; ++tm)
#pragma unroll
      for (int tn = 0; tn < Tile::kTilesN; ++tn)
#pragma unroll
        for (int i = 0; i < mma::kOwnedPerLane; ++i) acc[tm][tn][i] = 0.0f;

    decode_weight_stage<F, Tile>(tid, rows, 0, n_subs, sm.stage[0]);
    gather_act_stage<Tile>(tid, sm.act_row, args.act_codes, args.act_scales, K, 0, sm.stage[0]);
    gpu::sync_block();
    for (int stage = 0; stage < n_stages; ++stage) {
      const int buf = stage & 1;
      if (stage + 1 < n_stages) {
        decode_weight_stage<F, Tile>(tid, rows, stage + 1, n_subs, sm.stage[buf ^ 1]);
        gather_act_stage<Tile>(tid, sm.act_row, args.act_codes, args.act_scales, K, stage + 1,
                               sm.stage[buf ^ 1]);
      }
      const StageTiles<Tile>& st = sm.stage[buf];

      // ---- per sub-block: two chained tile products, then the fold of every element --------
#pragma unroll
      for (int s = 0; s < Tile::kStageSubs; ++s) {
        if (stage * Tile::kStageSubs + s >= n_subs) break;
#pragma unroll
        for (int tm = 0; tm < Tile::kTilesM; ++tm) {
#pragma unroll
          for (int tn = 0; tn < Tile::kTilesN; ++tn) {
            const int row0 = warp_m * Tile::kWarpRows + mma::kTile16 * tm;
            const int pair0 = warp_n * Tile::kWarpPairs + mma::kTile16 * tn;
            mma::Tile16::Acc dot;
            mma::Tile16::zero(dot);
#pragma unroll
            for (int half = 0; half < 2; ++half)
              mma::mma_tile_16(dot, &st.weights[2 * s + half][0][0] + mma::a_index(row0, 0, 16), 16,
                               &st.acts[2 * s + half][0][0] + mma::b_index(0, pair0, 16), 16);
            mma::Tile16::store(sm.scratch[warp], dot);
            gpu::sync_wave();
#pragma unroll
            for (int i = 0; i < mma::kOwnedPerLane; ++i) {
              const int m = mma::owned_row(lane, i), n = mma::owned_col(lane, i);
              acc[tm][tn][i] = fold_chain<F>(acc[tm][tn][i], sm.scratch[warp][mma::c_index(m, n)],
                                             st.weight_scale[row0 + m], st.act_scale[pair0 + n], s,
                                             Tile::kStageSubs);
            }
            gpu::sync_wave();  // the scratch tile is read before the next store
          }
        }
      }
      gpu::sync_block();  // stage `buf` fully read; stage buf ^ 1 fully written
    }

    // ---- fp32 results to shared, [pair][weight row] --------------------------------------
#pragma unroll
    for (int tm = 0; tm < Tile::kTilesM; ++tm)
#pragma unroll
      for (int tn = 0; tn < Tile::kTilesN; ++tn)
#pragma unroll
        for (int i = 0; i < mma::kOwnedPerLane; ++i) {
          const int row = warp_m * Tile::kWarpRows + mma::kTile16 * tm + mma::owned_row(lane, i);
          const int pair = warp_n * Tile::kWarpPairs + mma::kTile16 * tn + mma::owned_col(lane, i);
          sm.out[pair][row] = acc[tm][tn][i];
        }
    gpu::sync_block();

    if constexpr (Op::kSwiglu) {
      // ---- epilogue: SwiGLU + requantise h, one task per (pair, 32-feature block) ------------
      const int f = args.out_features;
      constexpr int kBlocks = kColumns / 32;
      for (int task = tid; task < Tile::kPairs * kBlocks; task += Tile::kThreads) {
        const int p = task / kBlocks, b = task % kBlocks;
        const int feature_base = column_begin + 32 * b;
        if (p >= pair_count || feature_base >= f)
          continue;  // f % 32 == 0: a block is all in or out
        const float* gate = &sm.out[p][32 * b];
        const float* up = &sm.out[p][kColumns + 32 * b];
        float h[32];
        alignas(16) int8_t codes[32];
        float scale = 0.0f;
        int32_t half_sums[2] = {0, 0};
        blocks::swiglu_requant_block32(gate, up, h, codes, &scale, half_sums);
        const int64_t row = static_cast<int64_t>(pair_begin) + p;
        int8_t* code_dst = args.h_codes + row * f + feature_base;
        copy16(code_dst, codes);
        copy16(code_dst + 16, codes + 16);
        blocks::store_h_block(args, row * (f / 32) + feature_base / 32, scale, half_sums[0], half_sums[1]);
        if (args.h_out != nullptr)
          for (int i = 0; i < 32; ++i) args.h_out[row * f + feature_base + i] = h[i];
        if (args.product_out[0] != nullptr)
          for (int i = 0; i < 32; ++i) args.product_out[0][row * f + feature_base + i] = gate[i];
        if (args.product_out[1] != nullptr)
          for (int i = 0; i < 32; ++i) args.product_out[1][row * f + feature_base + i] = up[i];
      }
    } else {
      // ---- down-store epilogue: one fp32 row per sorted pair, coalesced along the columns ----
      const blocks::ProductStore<false> store{args.product_out[0], args.out_features, pair_begin, pair_count, column_begin,
                                       args.out_features - column_begin};
      for (int task = tid; task < Tile::kPairs * kColumns; task += Tile::kThreads) {
        const int p = task / kColumns, r = task % kColumns;
        store(p, r, sm.out[p][r]);
      }
    }
  }
}

}  // namespace strata::cuda::fused_wmma
