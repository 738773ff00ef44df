// Device code of the production grouped GEMM (included by the per-format instantiation files).
//
// A persistent grid walks the work items (row tile of an expert's pairs x column block of weight
// rows x operand), built on the device by the grouping step, so the host never learns the
// per-expert counts. Per item, K is walked in double-buffered stages, software-pipelined: the
// next stage's weight bytes are loaded into registers (DeviceDecoder::load_raw) and its activation
// codes and scales copied with cp.async before the current stage is multiplied; the weights are
// decoded into the other shared buffer after it. Every 32-wide k slice is one mma.sync m16n8k32
// per fragment (the exact int32 dot), folded into fp32 strictly in slice order.
// NOTE: no split-K and no reordering of slices: that keeps the result bitwise equal to the CPU arms.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/blocks/decoders.hpp"
#include "cuda/blocks/epilogue.hpp"
#include "cuda/blocks/product_args.hpp"
#include "cuda/blocks/work_item.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/persistent_launch.hpp"
#include "cuda/common/ptx.cuh"
#include "cuda/mma/mma_m16n8k32.cuh"
#include "cuda/production/grouped_gemm.hpp"
#include "cuda/production/tile_config.hpp"
#include "formats/format.hpp"
#include "pipeline/arith.hpp"

namespace strata::cuda::production {

template <class F, class Tile>
struct GemmShared {
  alignas(16) int8_t weights[2][Tile::kWeightRows][Tile::kRowStrideBytes];  // [stage][row][k] int8
  alignas(16) int8_t acts[2][Tile::kPairs][Tile::kRowStrideBytes];          // [stage][pair][k] int8
  alignas(16) float weight_scale[2][Tile::kStageSubs][Tile::kWeightRows];   // [stage][sub][row]
  alignas(16) float act_scale[2][Tile::kStageSubs][Tile::kPairs];           // [stage][sub][pair]
  int32_t act_row[Tile::kPairs];                                            // activation row per pair
  uint32_t table[blocks::DeviceDecoder<F>::kTableWords];                    // the format's decode table
};

template <class F, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    grouped_gemm_kernel(const blocks::ProductArgs args) {
  using Decoder = blocks::DeviceDecoder<F>;
  static_assert(!F::kSplitScales, "one int32 dot per 32-wide slice needs one scale per slice");
  static_assert(!F::kHasOffset, "offset formats need the activation half sums folded in; none is carried");
  static_assert(32 * 127 * Decoder::kMaxAbsCode <= kDotBiasMaxAbs, "the slice dot must fit the exact bias trick");
  constexpr int kSubsPerBlock = F::kBlockValues / 32;
  extern __shared__ __align__(16) unsigned char gemm_shared_bytes[];
  GemmShared<F, Tile>& sm = *reinterpret_cast<GemmShared<F, Tile>*>(gemm_shared_bytes);

  const int K = args.in_features;
  const int n_subs = K / 32;                                   // k slices over the whole row
  const int n_stages = (n_subs + Tile::kStageSubs - 1) / Tile::kStageSubs;
  const int col_blocks = (args.out_features + Tile::kWeightRows - 1) / Tile::kWeightRows;
  const int items_per_tile = col_blocks * args.n_tensors;
  const int64_t n_items = blocks::work_items(args, items_per_tile);

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int group = lane / 4, tig = lane % 4;
  const int warp_m = warp % Tile::kWarpsM, warp_n = warp / Tile::kWarpsM;
  const int warp_row0 = warp_m * Tile::kWarpRows, warp_pair0 = warp_n * Tile::kWarpPairs;
  // ldmatrix: lane l addresses row l % 8 of matrix l / 8.
  const int ld_row = lane % 8, ld_matrix = lane / 8;

  for (int i = tid; i < Decoder::kTableWords; i += Tile::kThreads) sm.table[i] = Decoder::table_word(i);

  for (int64_t item = blockIdx.x; item < n_items; item += gridDim.x) {
    // ---- which expert, pairs and weight rows ---------------------------------------------
    const blocks::WorkItem w = blocks::work_item<Tile::kPairs>(args, item, items_per_tile);
    const int op_index = w.column_block / col_blocks;  // which tensor
    const int row_begin = (w.column_block % col_blocks) * Tile::kWeightRows;
    const int row_count = min(Tile::kWeightRows, args.out_features - row_begin);
    const int32_t pair_begin = w.pair_begin;
    const int pair_count = w.pair_count;
    const uint8_t* expert_weights =
        args.weights[op_index] + static_cast<size_t>(w.expert) * args.expert_stride_bytes[op_index];

    __syncthreads();  // the previous item's readers are done with every shared buffer
    for (int p = tid; p < Tile::kPairs; p += Tile::kThreads) {
      const int32_t pair = pair_begin + p;
      sm.act_row[p] = (p < pair_count) ? static_cast<int32_t>(blocks::pair_act_row(args, pair)) : -1;
    }
    __syncthreads();

    // ---- stage producers ------------------------------------------------------------------
    // Task t of this thread: sub-block s of weight row r, t = tid + i * kThreads.
    typename Decoder::Raw raw[Tile::kDecodeTasks];
    bool raw_valid[Tile::kDecodeTasks];
    auto load_weights = [&](int stage) {
#pragma unroll
      for (int i = 0; i < Tile::kDecodeTasks; ++i) {
        const int task = tid + i * Tile::kThreads;
        const int r = task / Tile::kStageSubs, sub = stage * Tile::kStageSubs + task % Tile::kStageSubs;
        raw_valid[i] = r < row_count && sub < n_subs;
        if (raw_valid[i]) {
          const uint8_t* block = expert_weights + static_cast<size_t>(row_begin + r) * args.row_bytes +
                                 static_cast<size_t>(sub / kSubsPerBlock) * F::kBlockBytes;
          raw[i] = Decoder::load_raw(block, sub % kSubsPerBlock);
        }
      }
    };
    auto store_weights = [&](int buf) {
#pragma unroll
      for (int i = 0; i < Tile::kDecodeTasks; ++i) {
        const int task = tid + i * Tile::kThreads;
        const int r = task / Tile::kStageSubs, s = task % Tile::kStageSubs;
        uint32_t w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        float scale = 0.0f;
        if (raw_valid[i]) Decoder::decode(raw[i], sm.table, w, scale);
        uint4* dst = reinterpret_cast<uint4*>(&sm.weights[buf][r][32 * s]);
        dst[0] = make_uint4(w[0], w[1], w[2], w[3]);
        dst[1] = make_uint4(w[4], w[5], w[6], w[7]);
        sm.weight_scale[buf][s][r] = scale;
      }
    };
    auto copy_acts = [&](int stage, int buf) {
      constexpr int kChunks = Tile::kStageValues / 16;  // 16-byte chunks per activation row
      for (int task = tid; task < Tile::kPairs * kChunks; task += Tile::kThreads) {
        const int p = task / kChunks, c = task % kChunks;
        const int k = stage * Tile::kStageValues + 16 * c;
        const int32_t row = sm.act_row[p];
        const bool valid = row >= 0 && k < K;
        cp_async_16(&sm.acts[buf][p][16 * c], valid ? args.act_codes + static_cast<int64_t>(row) * K + k : args.act_codes,
                    valid);
      }
      for (int task = tid; task < Tile::kPairs * Tile::kStageSubs; task += Tile::kThreads) {
        const int s = task / Tile::kPairs, p = task % Tile::kPairs;
        const int sub = stage * Tile::kStageSubs + s;
        const int32_t row = sm.act_row[p];
        const bool valid = row >= 0 && sub < n_subs;
        cp_async_4(&sm.act_scale[buf][s][p], valid ? args.act_scales + static_cast<int64_t>(row) * n_subs + sub : args.act_scales,
                   valid);
      }
      cp_async_commit();
    };

    // acc[mi][ni][r]: weight row warp_row0 + 16*mi + group + 8*(r/2),
    //                 pair warp_pair0 + 8*ni + 2*tig + r%2.
    float acc[Tile::kMmaM][Tile::kMmaN][4];
#pragma unroll
    for (int mi = 0; mi < Tile::kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.0f;

    load_weights(0);
    copy_acts(0, 0);
    store_weights(0);
    cp_async_wait_all();
    __syncthreads();
    for (int stage = 0; stage < n_stages; ++stage) {
      const int buf = stage & 1;
      const bool has_next = stage + 1 < n_stages;
      if (has_next) {  // in flight while this stage is multiplied
        load_weights(stage + 1);
        copy_acts(stage + 1, buf ^ 1);
      }

      // ---- multiply the stage's slices, folding each in order -----------------------------
      // NOTE: not unrolled: hoisting the next slices' fragment loads costs more registers than it hides.
#pragma unroll 1
      for (int s = 0; s < Tile::kStageSubs; ++s) {
        if (stage * Tile::kStageSubs + s >= n_subs) break;
        uint32_t b[Tile::kMmaN][2];
#pragma unroll
        for (int ni = 0; ni < Tile::kMmaN; ni += 2) {
          const int pair = warp_pair0 + 8 * (ni + ld_matrix / 2) + ld_row;
          ldmatrix_x4(b[ni][0], b[ni][1], b[ni + 1][0], b[ni + 1][1], &sm.acts[buf][pair][32 * s + 16 * (ld_matrix % 2)]);
        }
        // Scales of this thread's pairs and rows for the slice, in registers for every fragment.
        float a_scale[Tile::kMmaN][2];
#pragma unroll
        for (int ni = 0; ni < Tile::kMmaN; ++ni) {
          const float2 v = *reinterpret_cast<const float2*>(&sm.act_scale[buf][s][warp_pair0 + 8 * ni + 2 * tig]);
          a_scale[ni][0] = v.x;
          a_scale[ni][1] = v.y;
        }
#pragma unroll
        for (int mi = 0; mi < Tile::kMmaM; ++mi) {
          const int row0 = warp_row0 + 16 * mi;
          uint32_t a[4];
          ldmatrix_x4(a[0], a[1], a[2], a[3], &sm.weights[buf][row0 + 8 * (ld_matrix % 2) + ld_row][32 * s + 16 * (ld_matrix / 2)]);
          const float w_scale[2] = {sm.weight_scale[buf][s][row0 + group], sm.weight_scale[buf][s][row0 + group + 8]};
#pragma unroll
          for (int ni = 0; ni < Tile::kMmaN; ++ni) {
            const int32_t bias[4] = {kDotBiasBits, kDotBiasBits, kDotBiasBits, kDotBiasBits};
            int32_t dot[4];
            mma::mma_m16n8k32_s8(dot, a, b[ni], bias);
#pragma unroll
            for (int r = 0; r < 4; ++r)
              acc[mi][ni][r] = fold_biased_dot<F>(acc[mi][ni][r], dot[r], w_scale[r / 2], a_scale[ni][r % 2]);
          }
        }
      }
      if (has_next) store_weights(buf ^ 1);
      cp_async_wait_all();
      __syncthreads();  // stage `buf` fully read; stage buf ^ 1 fully written
    }

    // ---- down-store epilogue: the tile's valid outputs, out[pair][row] --------------------
    const blocks::ProductStore<> store{args.product_out[op_index], args.out_features, pair_begin, pair_count,
                                       row_begin, row_count};
#pragma unroll
    for (int mi = 0; mi < Tile::kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int row = warp_row0 + 16 * mi + group + 8 * (r / 2);
          const int pair = warp_pair0 + 8 * ni + 2 * tig + (r % 2);
          store(pair, row, acc[mi][ni][r]);
        }
  }
}

template <class F, class Tile>
void launch_grouped_gemm_tile(const blocks::ProductArgs& args, cudaStream_t stream) {
  constexpr size_t kSharedBytes = sizeof(GemmShared<F, Tile>);
  const auto kernel = grouped_gemm_kernel<F, Tile>;
  const int grid = persistent_grid(kernel, Tile::kThreads, kSharedBytes);
  kernel<<<grid, Tile::kThreads, kSharedBytes, stream>>>(args);
  STRATA_CUDA_CHECK_LAUNCH("grouped_gemm_kernel");
}

template <class F>
void launch_grouped_gemm(const blocks::ProductArgs& args, TileKind tile, cudaStream_t stream) {
  switch (tile) {
    case TileKind::kSmall: launch_grouped_gemm_tile<F, TileSmall>(args, stream); return;
    case TileKind::kLarge: launch_grouped_gemm_tile<F, TileLarge>(args, stream); return;
    case TileKind::kWide: launch_grouped_gemm_tile<F, TileWide>(args, stream); return;
  }
}

}  // namespace strata::cuda::production
