// Device code of the fused gate/up + SwiGLU + requant kernel (included by the per-format
// instantiation files).
//
// A persistent grid walks the work items (row tile of an expert's sorted pairs x block of h
// features), built on the device by the grouping step. Per item and per 64-value K stage:
//   - activation codes and scales of the tile's pairs are gathered with cp.async, kActStages
//     stages in flight (zero-filled past the expert's last pair);
//   - the weight sub-blocks of stage s + 1 are decoded (blocks::DeviceDecoder<F>, from raw bytes loaded
//     during stage s - 1) into a double-buffered shared tile of 80-byte rows after the tensor
//     cores multiply stage s, and the raw loads of stage s + 2 are issued;
//   - every 32-wide slice is one mma.sync m16n8k32 (the exact int32 dot, converted exactly), folded
//     into fp32 with the operations of fold_slice<F> strictly in slice order.
// In each m16 tile rows 0-7 are gate rows and rows 8-15 the up rows of the same 8 features, so a
// lane holds gate (c0/c1) and up (c2/c3) of one (feature, pair): SwiGLU needs no exchange, and the
// per-32-feature requantisation of h reduces its amax and half sums with xor-shuffles.
// NOTE: no split-K, no reordering of slices, and h requantised by the exact operations of
// quantize_block32: the codes are bitwise equal to the production arm's and the CPU arms'.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/blocks/decoders.hpp"
#include "cuda/blocks/epilogue.hpp"
#include "cuda/blocks/product_args.hpp"
#include "cuda/blocks/requant_lanes.cuh"
#include "cuda/blocks/work_item.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/persistent_launch.hpp"
#include "cuda/common/ptx.cuh"
#include "cuda/fused/gate_up_swiglu.hpp"
#include "cuda/fused/tile_config.hpp"
#include "cuda/mma/mma_m16n8k32.cuh"
#include "formats/format.hpp"
#include "pipeline/arith.hpp"

namespace strata::cuda::fused {

template <class F, class Tile>
struct FusedShared {
  uint32_t table[blocks::DeviceDecoder<F>::kTableWords];                        // format lookup table
  alignas(16) int8_t weights[2][Tile::kWeightRows][Tile::kRowStrideBytes];     // [buf][row][k] int8
  alignas(16) int8_t acts[Tile::kActStages][Tile::kPairs][Tile::kRowStrideBytes];  // [slot][pair][k]
  alignas(16) float act_scale[Tile::kActStages][Tile::kPairs][Tile::kStageSubs];   // [slot][pair][sub]
  float weight_scale[2][Tile::kWeightRows][Tile::kStageSubs];                   // [buf][row][sub]
};

template <class F, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    fused_gate_up_kernel(const blocks::ProductArgs args) {
  static_assert(!F::kSplitScales && !F::kHasOffset,
                "one int32 dot per slice and no activation-sum term (extend the fold for others)");
  static_assert(F::kBlockValues % 32 == 0, "whole 32-value sub-blocks per block");
  constexpr int kSubsPerBlock = F::kBlockValues / 32;
  using Decoder = blocks::DeviceDecoder<F>;
  static_assert(32 * 127 * Decoder::kMaxAbsCode <= kDotBiasMaxAbs, "the exact int32 -> fp32 step (unbias_dot)");
  constexpr int kDecodeTasks = Tile::kWeightRows * Tile::kStageSubs / Tile::kThreads;  // per thread and stage
  static_assert(Tile::kWeightRows * Tile::kStageSubs % Tile::kThreads == 0, "decode tasks spread evenly");
  extern __shared__ __align__(16) uint8_t shared_raw[];
  FusedShared<F, Tile>& sm = *reinterpret_cast<FusedShared<F, Tile>*>(shared_raw);

  const int d = args.in_features, f = args.out_features;
  const int n_subs = d / 32;                           // k slices over the whole row
  const int n_stages = d / Tile::kStageValues;         // d % 64 == 0 (fused_supports)
  const int feature_blocks = (f + Tile::kFeatures - 1) / Tile::kFeatures;
  const int64_t n_items = blocks::work_items(args, feature_blocks);

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int group = lane / 4, tig = lane % 4;
  const int warp_m = warp % Tile::kWarpsM, warp_n = warp / Tile::kWarpsM;
  // visible after the first item's barrier
  for (int i = tid; i < Decoder::kTableWords; i += Tile::kThreads) sm.table[i] = Decoder::table_word(i);

  for (int64_t item = blockIdx.x; item < n_items; item += gridDim.x) {
    // ---- which expert, pairs and features ------------------------------------------------
    const blocks::WorkItem w = blocks::work_item<Tile::kPairs>(args, item, feature_blocks);
    const int feature_begin = w.column_block * Tile::kFeatures;
    const int32_t pair_begin = w.pair_begin;
    const int pair_count = w.pair_count;
    const uint8_t* gate_expert = args.weights[0] + static_cast<size_t>(w.expert) * args.expert_stride_bytes[0];
    const uint8_t* up_expert = args.weights[1] + static_cast<size_t>(w.expert) * args.expert_stride_bytes[1];

    // Each thread copies one fixed 16-byte chunk (and maybe one scale pair) of every stage.
    // NOTE: args.pair_row is never null here (activation rows are tokens); a null test per item
    // costs this kernel registers.
    const int copy_pair = tid / (Tile::kStageValues / 16), copy_chunk = tid % (Tile::kStageValues / 16);
    const bool copy_thread = tid < Tile::kActChunks;
    const bool copy_valid = copy_thread && copy_pair < pair_count;
    const int64_t copy_token = copy_valid ? args.pair_row[pair_begin + copy_pair] : 0;
    const bool scale_thread = tid < Tile::kPairs;
    const bool scale_valid = scale_thread && tid < pair_count;
    const int64_t scale_token = scale_valid ? args.pair_row[pair_begin + tid] : 0;

    __syncthreads();  // the previous item's readers are done with every shared buffer

    auto issue_acts = [&](int stage) {
      if (stage < n_stages) {
        const int slot = stage % Tile::kActStages;
        if (copy_thread)
          cp_async_16(&sm.acts[slot][copy_pair][16 * copy_chunk],
                      args.act_codes + copy_token * d + stage * Tile::kStageValues + 16 * copy_chunk, copy_valid);
        if (scale_thread)
          cp_async_8(&sm.act_scale[slot][tid][0], args.act_scales + scale_token * n_subs + stage * Tile::kStageSubs,
                     scale_valid);
      }
      cp_async_commit();  // an empty group past the end keeps the wait counts uniform
    };

    // Decode task i of a thread: shared row r = task / kStageSubs, slice s = task % kStageSubs, with
    // task = tid + i * kThreads. Row r holds feature feature_begin + 8*(r/16) + r%8: gate rows for
    // r%16 < 8, up rows for r%16 >= 8 (the same 8 features), so c0/c1 and c2/c3 pair up in a lane.
    typename Decoder::Raw raw[kDecodeTasks];
    auto task_feature = [&](int i) {
      const int r = (tid + i * Tile::kThreads) / Tile::kStageSubs;
      return feature_begin + 8 * (r / 16) + r % 8;
    };
    auto load_raw = [&](int stage) {  // global loads only: consumed one MMA stage later
#pragma unroll
      for (int i = 0; i < kDecodeTasks; ++i) {
        const int task = tid + i * Tile::kThreads;
        const int r = task / Tile::kStageSubs, s = task % Tile::kStageSubs;
        const int feature = task_feature(i);
        const int sub = stage * Tile::kStageSubs + s;
        if (feature < f) {
          const uint8_t* row = ((r % 16) < 8 ? gate_expert : up_expert) + static_cast<size_t>(feature) * args.row_bytes;
          raw[i] = Decoder::load_raw(row + static_cast<size_t>(sub / kSubsPerBlock) * F::kBlockBytes, sub % kSubsPerBlock);
        }
      }
    };
    auto store_decoded = [&](int buf) {
#pragma unroll
      for (int i = 0; i < kDecodeTasks; ++i) {
        const int task = tid + i * Tile::kThreads;
        const int r = task / Tile::kStageSubs, s = task % Tile::kStageSubs;
        uint32_t w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        float scale = 0.0f;
        if (task_feature(i) < f) Decoder::decode(raw[i], sm.table, w, scale);
        uint4* dst = reinterpret_cast<uint4*>(&sm.weights[buf][r][32 * s]);
        dst[0] = make_uint4(w[0], w[1], w[2], w[3]);
        dst[1] = make_uint4(w[4], w[5], w[6], w[7]);
        sm.weight_scale[buf][r][s] = scale;
      }
    };

    // acc[mi][ni][c]: feature feature_begin + 32*warp_m + 8*mi + group; pair
    // warp_n*kWarpPairs + 8*ni + 2*tig + c%2; gate for c = 0, 1 and up for c = 2, 3.
    float acc[Tile::kMmaM][Tile::kMmaN][4];
#pragma unroll
    for (int mi = 0; mi < Tile::kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[mi][ni][c] = 0.0f;

    // ---- pipeline prologue: kActStages - 1 activation stages in flight, weights of stage 0 ------
#pragma unroll
    for (int i = 0; i < Tile::kActStages - 1; ++i) issue_acts(i);
    load_raw(0);
    store_decoded(0);
    if (n_stages > 1) load_raw(1);

    for (int stage = 0; stage < n_stages; ++stage) {
      const int buf = stage & 1, slot = stage % Tile::kActStages;
      cp_async_wait<Tile::kActStages - 2>();  // this thread's copies of `stage` have landed
      __syncthreads();  // everyone's copies and the weights of `stage` visible; stage - 1 fully read
      issue_acts(stage + Tile::kActStages - 1);  // into the slot stage - 1 used

      // ---- multiply the stage's two slices, folding each in order ---------------------------
#pragma unroll
      for (int s = 0; s < Tile::kStageSubs; ++s) {
        uint32_t a[Tile::kMmaM][4];
        uint32_t b[Tile::kMmaN][2];
        const int k = 32 * s + 4 * tig;
#pragma unroll
        for (int mi = 0; mi < Tile::kMmaM; ++mi) {
          const int row = warp_m * Tile::kWarpRows + 16 * mi + group;
          a[mi][0] = *reinterpret_cast<const uint32_t*>(&sm.weights[buf][row][k]);
          a[mi][1] = *reinterpret_cast<const uint32_t*>(&sm.weights[buf][row + 8][k]);
          a[mi][2] = *reinterpret_cast<const uint32_t*>(&sm.weights[buf][row][k + 16]);
          a[mi][3] = *reinterpret_cast<const uint32_t*>(&sm.weights[buf][row + 8][k + 16]);
        }
#pragma unroll
        for (int ni = 0; ni < Tile::kMmaN; ++ni) {
          const int pair = warp_n * Tile::kWarpPairs + 8 * ni + group;
          b[ni][0] = *reinterpret_cast<const uint32_t*>(&sm.acts[slot][pair][k]);
          b[ni][1] = *reinterpret_cast<const uint32_t*>(&sm.acts[slot][pair][k + 16]);
        }
        float act_scale[Tile::kMmaN][2];
#pragma unroll
        for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
          for (int c = 0; c < 2; ++c)
            act_scale[ni][c] = sm.act_scale[slot][warp_n * Tile::kWarpPairs + 8 * ni + 2 * tig + c][s];
#pragma unroll
        for (int mi = 0; mi < Tile::kMmaM; ++mi) {
          const int row = warp_m * Tile::kWarpRows + 16 * mi + group;
          const float gate_scale = sm.weight_scale[buf][row][s];
          const float up_scale = sm.weight_scale[buf][row + 8][s];
#pragma unroll
          for (int ni = 0; ni < Tile::kMmaN; ++ni) {
            const int32_t bias[4] = {kDotBiasBits, kDotBiasBits, kDotBiasBits, kDotBiasBits};
            int32_t dot[4];
            mma::mma_m16n8k32_s8(dot, a[mi], b[ni], bias);
#pragma unroll
            for (int c = 0; c < 4; ++c)
              acc[mi][ni][c] = fold_biased_dot<F>(acc[mi][ni][c], dot[c], c < 2 ? gate_scale : up_scale,
                                                  act_scale[ni][c % 2]);
          }
        }
      }

      // ---- weights of stage + 1 into the other buffer (read at stage - 1, before the barrier);
      // the raw loads of stage + 2 go out now and land while stage + 1 is multiplied ------------
      if (stage + 1 < n_stages) store_decoded(buf ^ 1);
      if (stage + 2 < n_stages) load_raw(stage + 2);
    }
    cp_async_wait<0>();  // no copy outlives the item (the empty tail groups included)

    // ---- epilogue: SwiGLU in registers, requantise per 32 features, write codes ---------------
    const int feature_base = feature_begin + 32 * warp_m;  // this warp's requant block
    const bool block_valid = feature_base < f;             // f % 32 == 0: all 32 or none
    const int n_blocks32 = f / 32;
#pragma unroll
    for (int ni = 0; ni < Tile::kMmaN; ++ni) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int pair = warp_n * Tile::kWarpPairs + 8 * ni + 2 * tig + c;
        float h[Tile::kMmaM];
#pragma unroll
        for (int mi = 0; mi < Tile::kMmaM; ++mi) h[mi] = swiglu(acc[mi][ni][c], acc[mi][ni][c + 2]);
        // Lanes of one tig hold the block's other features (the group bits, xor 4 .. 16); mi 0-1 are
        // features 0-15 (half 0), mi 2-3 features 16-31.
        static_assert(Tile::kMmaM == 4, "a lane holds 4 features of its warp's 32-feature block");
        int code[Tile::kMmaM];
        float scale;
        int half0, half1;
        blocks::LaneBlock32<Tile::kMmaM, 4, 16>::requant(h, code, scale, half0, half1);
        if (block_valid && pair < pair_count) {
          const int64_t row = static_cast<int64_t>(pair_begin) + pair;
#pragma unroll
          for (int mi = 0; mi < Tile::kMmaM; ++mi)
            blocks::store_h_value(args, row * f + feature_base + 8 * mi + group, code[mi], h[mi], acc[mi][ni][c],
                                  acc[mi][ni][c + 2]);
          if (group == 0) blocks::store_h_block(args, row * n_blocks32 + feature_base / 32, scale, half0, half1);
        }
      }
    }
  }
}

template <class F, class Tile>
constexpr size_t fused_shared_bytes() {
  return sizeof(FusedShared<F, Tile>);
}

template <class F, class Tile>
void launch_fused_gate_up_tile(const blocks::ProductArgs& args, cudaStream_t stream) {
  constexpr size_t kShared = fused_shared_bytes<F, Tile>();
  auto kernel = fused_gate_up_kernel<F, Tile>;
  const int grid = persistent_grid(kernel, Tile::kThreads, kShared);
  kernel<<<grid, Tile::kThreads, kShared, stream>>>(args);
  STRATA_CUDA_CHECK_LAUNCH("fused_gate_up_kernel");
}

template <class F>
void launch_fused_gate_up(const blocks::ProductArgs& args, FusedTileKind tile, cudaStream_t stream) {
  if (tile == FusedTileKind::kSmall) launch_fused_gate_up_tile<F, FusedSmall>(args, stream);
  else launch_fused_gate_up_tile<F, FusedLarge>(args, stream);
}

}  // namespace strata::cuda::fused
