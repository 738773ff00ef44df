// Device code of the fused-hopper kernels (included by the per-format instantiation files).
//
// A persistent grid walks the work items (pair tile of an expert x block of weight columns), built
// on the device by the grouping step. Warp-specialised, per CTA:
//   - producer (warpgroup 0): per K stage, waits until a shared slot is free (its
//     `empty` mbarrier), then moves the stage's raw weight bytes of every column (one bulk copy per
//     weight row: the 16-byte-aligned span around the row's blocks) and the activation codes of
//     every pair of the tile (one bulk copy per pair) with the bulk copy engine, completing on the
//     slot's `full` mbarrier; activation scales and any weight bytes a bulk copy cannot reach
//     (outside the tensor's aligned span) go by ordinary loads and stores before the arrival;
//   - consumers (warpgroups 1 and 2): wait on `full`, decode their columns' raw blocks into int8
//     core matrices in shared memory (fence.proxy.async, then a warpgroup barrier), and issue one
//     wgmma m64nNk32 per 32-wide k slice and m64 row tile — activations from registers (ldmatrix),
//     weights from shared memory — with the accumulators starting at the bits of 1.5 * 2^23; then
//     fold each exact int32 dot into fp32 by the operations of fold_slice<F>, strictly in slice
//     order, and release the slot.
// The epilogue is the fused arm's: SwiGLU in registers and h requantised per 32 features by the
// exact operations of quantize_block32 (gate/up), or the f32 rows of the down product (down).
// NOTE: no split-K, no reordering of slices: the outputs are bitwise equal to every other arm's.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/blocks/decoders.hpp"
#include "cuda/blocks/epilogue.hpp"
#include "cuda/blocks/product_args.hpp"
#include "cuda/blocks/requant_lanes.cuh"
#include "cuda/blocks/work_item.hpp"
#include "cuda/common/async_sm90.cuh"
#include "cuda/common/check.hpp"
#include "cuda/common/persistent_launch.hpp"
#include "cuda/common/ptx.cuh"
#include "cuda/fused_hopper/hopper_products.hpp"
#include "cuda/fused_hopper/span_copy.hpp"
#include "cuda/fused_hopper/tile_config.hpp"
#include "cuda/mma/wgmma_m64k32.cuh"
#include "pipeline/arith.hpp"

namespace strata::cuda::fused_hopper {

template <class Tile>
struct StageSlot {
  alignas(16) uint8_t raw[Tile::kCtaCols][Tile::kRawStride];         // raw blocks, 16-byte aligned spans
  alignas(16) int8_t acts[Tile::kPairs][Tile::kActStride];          // activation codes [pair][k]
  alignas(16) float act_scale[Tile::kPairs][Tile::kSubs];           // [pair][slice]
};

template <class F, class Tile>
struct HopperShared {
  uint64_t full[Tile::kStages];   // producer -> consumers: the slot's bytes have landed
  uint64_t empty[Tile::kStages];  // consumers -> producer: the slot has been read
  uint32_t table[blocks::DeviceDecoder<F>::kTableWords];
  alignas(128) int8_t decoded[Tile::kCtaCols * Tile::kStageValues];  // B tile, core-matrix order
  alignas(16) float decoded_scale[Tile::kSubs][Tile::kCtaCols];     // [slice][column]
  alignas(128) StageSlot<Tile> slot[Tile::kStages];
};

template <class F, class Tile>
constexpr size_t hopper_shared_bytes() {
  return sizeof(HopperShared<F, Tile>);
}

// The CTA's first weight column of an item, in interleaved columns (2 per feature for gate/up).
template <class Tile>
__device__ __forceinline__ int column_begin(const blocks::WorkItem& w) {
  return w.column_block * Tile::kCtaCols;
}

// The weight row behind CTA column n of an item, or null past the tensor's rows.
template <class Tile>
__device__ __forceinline__ const uint8_t* column_row(const ProductArgs& args, const blocks::WorkItem& w, int n,
                                                     int& op) {
  op = Tile::kOps == 2 ? n % 2 : 0;
  const int row = (column_begin<Tile>(w) + n) / Tile::kOps;
  if (row >= args.out_features) return nullptr;
  return args.weights[op] + static_cast<size_t>(w.expert) * args.expert_stride_bytes[op] +
         static_cast<size_t>(row) * args.row_bytes;
}

// The producer warpgroup: thread pt (0..127) moves CTA columns pt, pt + 128, ... and pair pt of the
// tile. Activation rows are 16-byte aligned whole (the host checks), so each is one bulk copy.
template <class F, class Tile>
__device__ __forceinline__ void producer_loop(const ProductArgs& args, HopperShared<F, Tile>& sm, int pt,
                                              int64_t n_items, int col_blocks, int n_stages) {
  uint32_t use = 0;  // stages produced so far by this CTA
  const int n_subs = args.in_features / 32;
  for (int64_t item = blockIdx.x; item < n_items; item += gridDim.x) {
    const blocks::WorkItem w = blocks::work_item<Tile::kPairs>(args, item, col_blocks);
    const bool has_pair = pt < w.pair_count;
    const int64_t act_row = !has_pair ? 0 : blocks::pair_act_row(args, w.pair_begin + pt);
    for (int stage = 0; stage < n_stages; ++stage, ++use) {
      const int s = static_cast<int>(use % Tile::kStages);
      if (use >= Tile::kStages) mbarrier_wait(&sm.empty[s], ((use / Tile::kStages) - 1) & 1u);
      StageSlot<Tile>& slot = sm.slot[s];
      if (has_pair) {  // activation scales: ordinary loads and stores, released by the arrival below
        const float* src = args.act_scales + act_row * n_subs + stage * Tile::kSubs;
#pragma unroll
        for (int q = 0; q < Tile::kSubs; ++q) slot.act_scale[pt][q] = src[q];
      }
      // Pass 1: ordinary stores (bytes outside the aligned span) and this thread's bulk
      // byte count; pass 2, after the arrival that announces the bytes: the bulk copies.
      uint32_t bytes = 0;
      for (int pass = 0; pass < 2; ++pass) {
#pragma unroll
        for (int i = 0; i < (Tile::kCtaCols + 127) / 128; ++i) {
          const int n = pt + 128 * i;
          if (n >= Tile::kCtaCols) break;
          int op = 0;
          const uint8_t* row = column_row<Tile>(args, w, n, op);
          if (row == nullptr) continue;
          const uint8_t* src = row + static_cast<size_t>(stage) * Tile::kRawBytes;
          uint32_t offset = 0;
          const uint32_t size =
              span_copy_plan(slot.raw[n], src, Tile::kRawBytes, args.weights[op], args.weights_end[op], pass == 0, offset);
          if (pass == 0) bytes += size;
          else if (size > 0)
            bulk_copy_g2s(slot.raw[n] + offset, src - (reinterpret_cast<uintptr_t>(src) & 15u) + offset, size,
                          &sm.full[s]);
        }
        if (has_pair) {
          if (pass == 0) {
            bytes += Tile::kStageValues;
          } else {
            bulk_copy_g2s(slot.acts[pt], args.act_codes + act_row * args.in_features + stage * Tile::kStageValues,
                          Tile::kStageValues, &sm.full[s]);
          }
        }
        if (pass == 0) mbarrier_arrive_expect_tx(&sm.full[s], bytes);  // releases this thread's stores
      }
    }
  }
}

template <class F, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, 1) hopper_product_kernel(const ProductArgs args) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Decoder = blocks::DeviceDecoder<F>;
  constexpr int kSubsPerBlock = F::kBlockValues / 32;
  static_assert(!F::kSplitScales && !F::kHasOffset,
                "one int32 dot per slice and no activation-sum term (extend the fold for others)");
  static_assert(32 * 127 * Decoder::kMaxAbsCode <= kDotBiasMaxAbs, "the exact int32 -> fp32 step (unbias_dot)");
  extern __shared__ __align__(128) uint8_t shared_raw[];
  HopperShared<F, Tile>& sm = *reinterpret_cast<HopperShared<F, Tile>*>(shared_raw);

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  const int n_stages = args.in_features / Tile::kStageValues;
  const int col_blocks = (Tile::kOps * args.out_features + Tile::kCtaCols - 1) / Tile::kCtaCols;
  const int64_t n_items = blocks::work_items(args, col_blocks);

  for (int i = tid; i < Decoder::kTableWords; i += Tile::kThreads) sm.table[i] = Decoder::table_word(i);
  init_stage_ring(sm.full, sm.empty, 128, 256);  // producer warpgroup, two consumer warpgroups
  __syncthreads();

  if (warpgroup == 0) {
    // ---- producer ------------------------------------------------------------------------
    setmaxnreg_decrease<Tile::kProducerRegisters>();
    producer_loop<F, Tile>(args, sm, tid, n_items, col_blocks, n_stages);
    return;
  }

  // ---- consumers ---------------------------------------------------------------------------
  setmaxnreg_increase<Tile::kConsumerRegisters>();
  const int c = warpgroup - 1;            // consumer index: columns [c * kWgCols, (c + 1) * kWgCols)
  const int t = tid - 128 * warpgroup;    // thread within the consumer warpgroup
  const int warp = t / 32, lane = t % 32;
  const int group = lane / 4, tig = lane % 4;
  const uint32_t bar_id = 1 + c;
  const uint32_t decoded_base = shared_address(sm.decoded) + c * Tile::kWgCols * Tile::kStageValues;
  uint32_t use = 0;

  for (int64_t item = blockIdx.x; item < n_items; item += gridDim.x) {
    const blocks::WorkItem w = blocks::work_item<Tile::kPairs>(args, item, col_blocks);

    float acc[Tile::kMTiles][Tile::kAccRegs];
#pragma unroll
    for (int mt = 0; mt < Tile::kMTiles; ++mt)
#pragma unroll
      for (int r = 0; r < Tile::kAccRegs; ++r) acc[mt][r] = 0.0f;

    for (int stage = 0; stage < n_stages; ++stage, ++use) {
      const int s = static_cast<int>(use % Tile::kStages);
      mbarrier_wait(&sm.full[s], (use / Tile::kStages) & 1u);
      StageSlot<Tile>& slot = sm.slot[s];

      // ---- decode this consumer's columns into core matrices --------------------------------
#pragma unroll
      for (int i = 0; i < Tile::kDecodeTasks; ++i) {
        const int task = t + 128 * i;
        const int n = c * Tile::kWgCols + task % Tile::kWgCols;  // CTA column
        const int q = task / Tile::kWgCols;                      // slice within the stage
        int op = 0;
        const uint8_t* row = column_row<Tile>(args, w, n, op);
        uint32_t words[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        float scale = 0.0f;
        if (row != nullptr) {
          const uintptr_t src = reinterpret_cast<uintptr_t>(row) + static_cast<uintptr_t>(stage) * Tile::kRawBytes;
          const uint8_t* block = slot.raw[n] + (src & 15u) + (q / kSubsPerBlock) * F::kBlockBytes;
          const auto raw = Decoder::load_raw(block, q % kSubsPerBlock, blocks::PlainLoad{});
          Decoder::decode(raw, sm.table, words, scale);
        }
        int8_t* core = sm.decoded + (n / 8) * Tile::kCoreStrideBytes + (2 * q) * Tile::kCoreLeadingBytes + (n % 8) * 16;
        *reinterpret_cast<uint4*>(core) = make_uint4(words[0], words[1], words[2], words[3]);
        *reinterpret_cast<uint4*>(core + Tile::kCoreLeadingBytes) = make_uint4(words[4], words[5], words[6], words[7]);
        sm.decoded_scale[q][n] = scale;
      }
      fence_proxy_async_shared();      // the generic stores above, before the tensor cores read them
      named_barrier_sync(bar_id, 128);

      // ---- one wgmma per slice and row tile; fold each slice in order ------------------------
#pragma unroll 1
      for (int q = 0; q < Tile::kSubs; ++q) {
        uint32_t a[Tile::kMTiles][4];
#pragma unroll
        for (int mt = 0; mt < Tile::kMTiles; ++mt)
          ldmatrix_x4(a[mt][0], a[mt][1], a[mt][2], a[mt][3],
                      &slot.acts[64 * mt + 16 * warp + lane % 16][32 * q + 16 * (lane / 16)]);
        int32_t dot[Tile::kMTiles][Tile::kAccRegs];
#pragma unroll
        for (int mt = 0; mt < Tile::kMTiles; ++mt) {
#pragma unroll
          for (int r = 0; r < Tile::kAccRegs; ++r) dot[mt][r] = kDotBiasBits;
          mma::fence_registers(dot[mt]);
        }
        mma::wgmma_fence();
        const uint64_t desc = mma::wgmma_desc(decoded_base + 2 * q * Tile::kCoreLeadingBytes, Tile::kCoreLeadingBytes,
                                              Tile::kCoreStrideBytes);
#pragma unroll
        for (int mt = 0; mt < Tile::kMTiles; ++mt) {
          if constexpr (Tile::kWgCols == 128) mma::wgmma_m64n128k32_s8_rs(dot[mt], a[mt], desc);
          else mma::wgmma_m64n64k32_s8_rs(dot[mt], a[mt], desc);
        }
        mma::wgmma_commit();
        mma::wgmma_wait<0>();
#pragma unroll
        for (int mt = 0; mt < Tile::kMTiles; ++mt) mma::fence_registers(dot[mt]);

#pragma unroll
        for (int mt = 0; mt < Tile::kMTiles; ++mt) {
          const int pair0 = 64 * mt + 16 * warp + group;
          if (64 * mt + 16 * warp >= w.pair_count) continue;  // the warp's 16 rows are all padding
          const float a_scale[2] = {slot.act_scale[pair0][q], slot.act_scale[pair0 + 8][q]};
#pragma unroll
          for (int j = 0; j < Tile::kAccRegs / 4; ++j) {
            const float2 w_scale =
                *reinterpret_cast<const float2*>(&sm.decoded_scale[q][c * Tile::kWgCols + 8 * j + 2 * tig]);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int r = 4 * j + 2 * h;
              acc[mt][r] = fold_biased_dot<F>(acc[mt][r], dot[mt][r], w_scale.x, a_scale[h]);
              acc[mt][r + 1] = fold_biased_dot<F>(acc[mt][r + 1], dot[mt][r + 1], w_scale.y, a_scale[h]);
            }
          }
        }
      }
      mbarrier_arrive(&sm.empty[s]);   // this thread's reads of the slot are done
      named_barrier_sync(bar_id, 128); // every warp is done with the B tile before the next decode
    }

    // ---- epilogue --------------------------------------------------------------------------
    if constexpr (Tile::kOps == 2) {
      // Lane holds gate (r even) and up (r odd) of feature f0 + 4j + tig for pairs group, group + 8.
      const int f = args.out_features;
      const int feature_base = (column_begin<Tile>(w) + c * Tile::kWgCols) / 2;
      const int n_blocks32 = f / 32;
#pragma unroll
      for (int mt = 0; mt < Tile::kMTiles; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int pair = 64 * mt + 16 * warp + group + 8 * h;
#pragma unroll
          for (int b = 0; b < Tile::kWgCols / 64; ++b) {
            float hv[8];
#pragma unroll
            for (int jj = 0; jj < 8; ++jj) {
              const int r = 4 * (8 * b + jj) + 2 * h;
              hv[jj] = swiglu(acc[mt][r], acc[mt][r + 1]);
            }
            // The block's 32 features of this pair live in the 4 lanes of one group (xor 1, 2); jj 0-3
            // are features 0-15 (half 0), jj 4-7 features 16-31.
            int code[8];
            float scale;
            int half0, half1;
            blocks::LaneBlock32<8, 1, 2>::requant(hv, code, scale, half0, half1);
            const int block_feature = feature_base + 32 * b;  // f % 32 == 0: all 32 valid or none
            if (pair < w.pair_count && block_feature < f) {
              const int64_t out_row = static_cast<int64_t>(w.pair_begin) + pair;
#pragma unroll
              for (int jj = 0; jj < 8; ++jj) {
                const int r = 4 * (8 * b + jj) + 2 * h;
                blocks::store_h_value(args, out_row * f + block_feature + 4 * jj + tig, code[jj], hv[jj], acc[mt][r],
                                      acc[mt][r + 1]);
              }
              if (tig == 0) blocks::store_h_block(args, out_row * n_blocks32 + block_feature / 32, scale, half0, half1);
            }
          }
        }
      }
    } else {
      // ---- down-store: lane holds rows col + 8j + 2 tig, + 1 of pairs group, group + 8 ------------
      const int consumer_column = column_begin<Tile>(w) + c * Tile::kWgCols;
      const blocks::ProductStore<> store{args.product_out[0], args.out_features, w.pair_begin, w.pair_count,
                                       consumer_column, args.out_features - consumer_column};
#pragma unroll
      for (int mt = 0; mt < Tile::kMTiles; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int pair = 64 * mt + 16 * warp + group + 8 * h;
#pragma unroll
          for (int j = 0; j < Tile::kAccRegs / 4; ++j) {
            store(pair, 8 * j + 2 * tig, acc[mt][4 * j + 2 * h]);
            store(pair, 8 * j + 2 * tig + 1, acc[mt][4 * j + 2 * h + 1]);
          }
        }
      }
    }
  }
#else
  (void)args;
  __trap();
#endif
}

template <class F, class Tile>
void launch_hopper_tile(const ProductArgs& args, cudaStream_t stream) {
  constexpr size_t kShared = hopper_shared_bytes<F, Tile>();
  static_assert(kShared <= 227 * 1024, "over the sm_90 shared-memory limit of one CTA");
  auto kernel = hopper_product_kernel<F, Tile>;
  const int sms = persistent_grid(kernel, Tile::kThreads, kShared);  // one CTA per SM
  kernel<<<sms, Tile::kThreads, kShared, stream>>>(args);
  STRATA_CUDA_CHECK_LAUNCH("hopper_product_kernel");
}

template <class F>
void launch_hopper_gate_up(const ProductArgs& args, HopperTileKind tile, cudaStream_t stream) {
  if (tile == HopperTileKind::kSmall) launch_hopper_tile<F, HopperSmall<F, 2, kGateUpStageValues>>(args, stream);
  else launch_hopper_tile<F, HopperLarge<F, 2, kGateUpStageValues>>(args, stream);
}

template <class F>
void launch_hopper_down(const ProductArgs& args, HopperTileKind tile, cudaStream_t stream) {
  const bool wide = args.in_features % kDownStageValuesWide == 0;
  if (tile == HopperTileKind::kSmall) {
    if (wide) launch_hopper_tile<F, HopperSmall<F, 1, kDownStageValuesWide>>(args, stream);
    else launch_hopper_tile<F, HopperSmall<F, 1, kDownStageValues>>(args, stream);
  } else {
    if (wide) launch_hopper_tile<F, HopperLarge<F, 1, kDownStageValuesWide>>(args, stream);
    else launch_hopper_tile<F, HopperLarge<F, 1, kDownStageValues>>(args, stream);
  }
}

}  // namespace strata::cuda::fused_hopper
