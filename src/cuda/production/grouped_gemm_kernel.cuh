// Device code of the production grouped GEMM (included by the per-format instantiation files).
//
// A persistent grid walks the work items (row tile of an expert's pairs x column block of weight
// rows x operand), built on the device by the grouping step, so the host never learns the
// per-expert counts. Per item: the weight rows' blocks are decoded (F::decode_sub) into int8
// shared tiles, the pairs' activation codes gathered from their token rows, and every 32-wide k
// slice is one mma.sync m16n8k32 with a zero accumulator (the exact int32 dot), folded into fp32
// with fold_slice<F> strictly in slice order.
// NOTE: no split-K and no reordering of slices: that keeps the result bitwise equal to the CPU arms.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/check.hpp"
#include "cuda/mma/mma_m16n8k32.cuh"
#include "cuda/production/grouped_gemm.hpp"
#include "cuda/production/tile_config.hpp"
#include "formats/format.hpp"
#include "pipeline/arith.hpp"

namespace strata::cuda::production {

template <class Tile>
struct GemmShared {
  alignas(16) int8_t weights[2][Tile::kWeightRows][Tile::kRowStrideBytes];  // [stage][row][k] int8
  alignas(16) int8_t acts[2][Tile::kPairs][Tile::kRowStrideBytes];          // [stage][pair][k] int8
  float weight_scale[2][Tile::kWeightRows][Tile::kStageSubs];               // [stage][row][sub]
  float weight_offset[2][Tile::kWeightRows][Tile::kStageSubs][2];           // offset formats only
  float act_scale[2][Tile::kPairs][Tile::kStageSubs];                       // [stage][pair][sub]
  int32_t act_half_sum[2][Tile::kPairs][Tile::kStageSubs][2];               // offset formats only
  int32_t act_row[Tile::kPairs];                                            // activation row per pair
};

// Last index i in [0, n) with table[i] <= value (table ascending, table[0] <= value).
__device__ __forceinline__ int upper_index(const int32_t* table, int n, int32_t value) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (table[mid] <= value) lo = mid; else hi = mid - 1;
  }
  return lo;
}

template <class F, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    grouped_gemm_kernel(const GemmArgs args) {
  static_assert(!F::kSplitScales, "one int32 dot per 32-wide slice needs one scale per slice");
  constexpr int kSubsPerBlock = F::kBlockValues / 32;
  __shared__ GemmShared<Tile> sm;

  const int K = args.in_features;
  const int n_subs = K / 32;                                   // k slices over the whole row
  const int n_stages = (n_subs + Tile::kStageSubs - 1) / Tile::kStageSubs;
  const int col_blocks = (args.out_features + Tile::kWeightRows - 1) / Tile::kWeightRows;
  const int items_per_tile = col_blocks * args.n_ops;
  const int64_t n_items = static_cast<int64_t>(args.tile_offsets[args.n_expert]) * items_per_tile;

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int group = lane / 4, tig = lane % 4;
  const int warp_m = warp % Tile::kWarpsM, warp_n = warp / Tile::kWarpsM;

  for (int64_t item = blockIdx.x; item < n_items; item += gridDim.x) {
    // ---- which expert, pairs and weight rows ---------------------------------------------
    const int32_t tile = static_cast<int32_t>(item / items_per_tile);
    const int within = static_cast<int>(item % items_per_tile);
    const int op_index = within / col_blocks;
    const int row_begin = (within % col_blocks) * Tile::kWeightRows;
    const int row_count = min(Tile::kWeightRows, args.out_features - row_begin);
    const int expert = upper_index(args.tile_offsets, args.n_expert + 1, tile);
    const int32_t pair_begin = args.expert_offsets[expert] + (tile - args.tile_offsets[expert]) * Tile::kPairs;
    const int pair_count = min(Tile::kPairs, args.expert_offsets[expert + 1] - pair_begin);
    const GemmOperand op = args.op[op_index];
    const uint8_t* expert_weights = op.weights + static_cast<size_t>(expert) * op.expert_stride_bytes;

    __syncthreads();  // the previous item's readers are done with every shared buffer
    for (int p = tid; p < Tile::kPairs; p += Tile::kThreads) {
      const int32_t pair = pair_begin + p;
      sm.act_row[p] = (p < pair_count) ? (args.pair_row != nullptr ? args.pair_row[pair] : pair) : -1;
    }
    __syncthreads();

    // ---- stage loader: decode weight sub-blocks, gather activation codes --------------------
    auto load_stage = [&](int stage, int buf) {
      for (int task = tid; task < Tile::kWeightRows * Tile::kStageSubs; task += Tile::kThreads) {
        const int r = task / Tile::kStageSubs, s = task % Tile::kStageSubs;
        const int sub = stage * Tile::kStageSubs + s;
        int8_t q[32];
        SubScale scale{{0.0f, 0.0f}, {0.0f, 0.0f}};
        if (r < row_count && sub < n_subs) {
          const uint8_t* block = expert_weights + static_cast<size_t>(row_begin + r) * op.row_bytes +
                                 static_cast<size_t>(sub / kSubsPerBlock) * F::kBlockBytes;
          F::decode_sub(block, sub % kSubsPerBlock, q, scale);
        } else {
#pragma unroll
          for (int i = 0; i < 32; ++i) q[i] = 0;
        }
        uint32_t w[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          w[i] = static_cast<uint32_t>(static_cast<uint8_t>(q[4 * i])) |
                 (static_cast<uint32_t>(static_cast<uint8_t>(q[4 * i + 1])) << 8) |
                 (static_cast<uint32_t>(static_cast<uint8_t>(q[4 * i + 2])) << 16) |
                 (static_cast<uint32_t>(static_cast<uint8_t>(q[4 * i + 3])) << 24);
        }
        uint4* dst = reinterpret_cast<uint4*>(&sm.weights[buf][r][32 * s]);
        dst[0] = make_uint4(w[0], w[1], w[2], w[3]);
        dst[1] = make_uint4(w[4], w[5], w[6], w[7]);
        sm.weight_scale[buf][r][s] = scale.scale[0];
        if constexpr (F::kHasOffset) {
          sm.weight_offset[buf][r][s][0] = scale.offset[0];
          sm.weight_offset[buf][r][s][1] = scale.offset[1];
        }
      }
      constexpr int kChunks = Tile::kStageValues / 16;  // 16-byte chunks per activation row
      for (int task = tid; task < Tile::kPairs * kChunks; task += Tile::kThreads) {
        const int p = task / kChunks, c = task % kChunks;
        const int k = stage * Tile::kStageValues + 16 * c;
        const int32_t row = sm.act_row[p];
        uint4 v = make_uint4(0, 0, 0, 0);
        if (row >= 0 && k < K) v = *reinterpret_cast<const uint4*>(args.act_codes + static_cast<int64_t>(row) * K + k);
        *reinterpret_cast<uint4*>(&sm.acts[buf][p][16 * c]) = v;
      }
      for (int task = tid; task < Tile::kPairs * Tile::kStageSubs; task += Tile::kThreads) {
        const int p = task / Tile::kStageSubs, s = task % Tile::kStageSubs;
        const int sub = stage * Tile::kStageSubs + s;
        const int32_t row = sm.act_row[p];
        const bool valid = row >= 0 && sub < n_subs;
        sm.act_scale[buf][p][s] = valid ? args.act_scales[static_cast<int64_t>(row) * n_subs + sub] : 0.0f;
        if constexpr (F::kHasOffset) {
          sm.act_half_sum[buf][p][s][0] = valid ? args.act_half_sums[(static_cast<int64_t>(row) * n_subs + sub) * 2] : 0;
          sm.act_half_sum[buf][p][s][1] = valid ? args.act_half_sums[(static_cast<int64_t>(row) * n_subs + sub) * 2 + 1] : 0;
        }
      }
    };

    // acc[mi][ni][r]: weight row warp_m*kWarpRows + 16*mi + group + 8*(r/2),
    //                 pair warp_n*kWarpPairs + 8*ni + 2*tig + r%2.
    float acc[Tile::kMmaM][Tile::kMmaN][4];
#pragma unroll
    for (int mi = 0; mi < Tile::kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.0f;

    load_stage(0, 0);
    __syncthreads();
    for (int stage = 0; stage < n_stages; ++stage) {
      const int buf = stage & 1;
      if (stage + 1 < n_stages) load_stage(stage + 1, buf ^ 1);

      // ---- multiply the stage's slices, folding each in order -----------------------------
#pragma unroll
      for (int s = 0; s < Tile::kStageSubs; ++s) {
        if (stage * Tile::kStageSubs + s >= n_subs) break;
        uint32_t a[Tile::kMmaM][4];
        uint32_t b[Tile::kMmaN][2];
#pragma unroll
        for (int mi = 0; mi < Tile::kMmaM; ++mi) {
          const int row = warp_m * Tile::kWarpRows + 16 * mi + group;
          const int k = 32 * s + 4 * tig;
          a[mi][0] = *reinterpret_cast<const uint32_t*>(&sm.weights[buf][row][k]);
          a[mi][1] = *reinterpret_cast<const uint32_t*>(&sm.weights[buf][row + 8][k]);
          a[mi][2] = *reinterpret_cast<const uint32_t*>(&sm.weights[buf][row][k + 16]);
          a[mi][3] = *reinterpret_cast<const uint32_t*>(&sm.weights[buf][row + 8][k + 16]);
        }
#pragma unroll
        for (int ni = 0; ni < Tile::kMmaN; ++ni) {
          const int pair = warp_n * Tile::kWarpPairs + 8 * ni + group;
          const int k = 32 * s + 4 * tig;
          b[ni][0] = *reinterpret_cast<const uint32_t*>(&sm.acts[buf][pair][k]);
          b[ni][1] = *reinterpret_cast<const uint32_t*>(&sm.acts[buf][pair][k + 16]);
        }
#pragma unroll
        for (int mi = 0; mi < Tile::kMmaM; ++mi) {
#pragma unroll
          for (int ni = 0; ni < Tile::kMmaN; ++ni) {
            const int32_t zero[4] = {0, 0, 0, 0};
            int32_t dot[4];
            mma::mma_m16n8k32_s8(dot, a[mi], b[ni], zero);
#pragma unroll
            for (int r = 0; r < 4; ++r) {
              const int row = warp_m * Tile::kWarpRows + 16 * mi + group + 8 * (r / 2);
              const int pair = warp_n * Tile::kWarpPairs + 8 * ni + 2 * tig + (r % 2);
              SubScale w;
              w.scale[0] = w.scale[1] = sm.weight_scale[buf][row][s];
              w.offset[0] = w.offset[1] = 0.0f;
              int32_t asum[2] = {0, 0};
              if constexpr (F::kHasOffset) {
                w.offset[0] = sm.weight_offset[buf][row][s][0];
                w.offset[1] = sm.weight_offset[buf][row][s][1];
                asum[0] = sm.act_half_sum[buf][pair][s][0];
                asum[1] = sm.act_half_sum[buf][pair][s][1];
              }
              const int32_t isum[2] = {dot[r], 0};
              acc[mi][ni][r] = fold_slice<F>(acc[mi][ni][r], isum, asum, w, sm.act_scale[buf][pair][s]);
            }
          }
        }
      }
      __syncthreads();  // stage `buf` fully read; stage buf ^ 1 fully written
    }

    // ---- write the tile's valid outputs: out[pair][row] -----------------------------------
#pragma unroll
    for (int mi = 0; mi < Tile::kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int row = warp_m * Tile::kWarpRows + 16 * mi + group + 8 * (r / 2);
          const int pair = warp_n * Tile::kWarpPairs + 8 * ni + 2 * tig + (r % 2);
          if (row < row_count && pair < pair_count)
            op.out[static_cast<int64_t>(pair_begin + pair) * args.out_features + row_begin + row] = acc[mi][ni][r];
        }
  }
}

template <class F, class Tile>
void launch_grouped_gemm_tile(const GemmArgs& args, cudaStream_t stream) {
  int device = 0, sms = 0, per_sm = 0;
  STRATA_CUDA_CHECK(cudaGetDevice(&device));
  STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  STRATA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grouped_gemm_kernel<F, Tile>,
                                                                  Tile::kThreads, 0));
  const int grid = sms * (per_sm > 0 ? per_sm : 1);
  grouped_gemm_kernel<F, Tile><<<grid, Tile::kThreads, 0, stream>>>(args);
  STRATA_CUDA_CHECK_LAUNCH("grouped_gemm_kernel");
}

template <class F>
void launch_grouped_gemm(const GemmArgs& args, TileKind tile, cudaStream_t stream) {
  if (tile == TileKind::kSmall) launch_grouped_gemm_tile<F, TileSmall>(args, stream);
  else launch_grouped_gemm_tile<F, TileLarge>(args, stream);
}

}  // namespace strata::cuda::production
