// Device code of the tokens-on-N q10 Hopper kernels (sm_90a): the weights on wgmma's M, decoded by
// the consumers straight into the A fragment (registers), and an expert's routed pairs on N, their
// activation codes as B in shared memory. The host side is in hopper_q10_launch.cuh.
//
// A persistent grid walks the work items (pair tile of an expert x block of 128 weight rows):
//   - producer (warpgroup 0): the raw weight stages of the item's rows into a ring of raw slots
//     (hopper_q10_raw_stage: TMA boxes or per-row bulk copies, as the column kernels), and per
//     chunk of 64 K values the tile's activation codes as wgmma B core matrices and their scales,
//     by 16-byte cp.async (zeros past the tile's pairs) that arrive on the chunk's barrier as they
//     land; the consumers pass the proxy fence after their wait;
//   - two consumers, 64 weight rows each: per chunk, each thread decodes its two rows' share of
//     the next chunk (FragmentChunk<F>) while the current chunk's four wgmma m64nNk16 run (the
//     accumulator restarted on the first: the span's exact integer dot, one span per chunk), then
//     folds every element, acc = fmaf(dot, w_scale * a_scale, acc): fold_span<F>'s operations.
// Gate/up: the rows of each warp's 16 are 8 gate rows then the 8 up rows of the same features, so
// a lane holds gate and up of one (feature, pair); the CTA's 128 rows are one 64-feature requant
// block per pair, whose amax and 16-feature code sums meet across the 8 consumer warps in shared
// memory (a max and integer sums: one value in any order). Down writes one fp32 row per pair.
// NOTE: no split-K, no reordering of spans: the bits are the q10 CPU arms' (and the column kernels').
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/async_sm90.cuh"
#include "cuda/common/ptx.cuh"
#include "cuda/fused_q10/hopper_q10_kernel.cuh"
#include "cuda/fused_q10/hopper_q10_tn_decode.hpp"
#include "cuda/mma/span_mma.cuh"
#include "cuda/mma/wgmma_f16.cuh"
#include "pipeline/arith.hpp"
#include "pipeline/arith_q10.hpp"

namespace strata::cuda::fused_q10 {

// NOTE: a configuration changes speed, never results.
//   Pairs:       routed pairs per tile, wgmma N (the tile the grouping's offsets were built for);
//   StageValues / Stages: the raw weight ring (whole blocks per stage);
//   ActSlots:    chunks of activation codes in flight.
template <class F, int Ops, int StageValues, int Stages, int Pairs, int ActSlots>
struct HopperQ10TnTile : HopperQ10RawRing<F, Ops, StageValues, Stages, 128> {
  using Raw = HopperQ10RawRing<F, Ops, StageValues, Stages, 128>;
  using Raw::kCtaCols, Raw::kOps, Raw::kStages, Raw::kRawBytes;
  static constexpr int kChunk = kQ10BlockValues;  // K values per chunk: one activation block, one span
  static constexpr int kChunksPerStage = StageValues / kChunk;
  static constexpr int kSteps = kChunk / 16;      // wgmma k16 steps per chunk
  static constexpr int kPairs = Pairs;            // [pairs] wgmma N
  static constexpr int kConsumerRows = 64;        // weight rows per consumer (wgmma M)
  static constexpr int kActSlots = ActSlots;
  static constexpr int kPieceRounds = Pairs * 8 / 128;  // 16-byte pieces of a chunk per producer thread
  // Items in flight: each has at least one raw stage, the producer runs at most kStages ahead.
  static constexpr int kItemSlots = Stages + 2;
  static constexpr int kThreads = 384;            // producer, two consumers
  static constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;
  // setmaxnreg (ptxas -v): the producer spills at 40 beside its four rows of cp.async pieces.
  static constexpr int kProducerRegisters = 56;
  static constexpr int kConsumerRegisters = 224;
  static constexpr int kAccRegs = Pairs / 2;      // f32 per thread: rows group, group + 8 x the pairs
  static constexpr int kPairGroups = Pairs / 8;   // 8-pair column groups of the accumulator
  // B tile of one chunk: core matrices of 8 pairs x 16 bytes (8 f16 of k); the K-adjacent core
  // matrices of a pair group are contiguous (leading offset 128), groups follow each other.
  static constexpr int kCoreLeadingBytes = 128;
  static constexpr int kCoreStrideBytes = 8 * kChunk * 2;
  static constexpr int kActBytes = Pairs * kChunk * 2;
  static constexpr int kConsumerWarps = 8;

  static_assert(kHopperQ10TnCarries<F>, "a fragment decode of the format (hopper_q10_tn_decode.hpp)");
  static_assert(F::kWideSpan == kChunk && !F::kHasOffset, "one span per chunk, no offset term");
  static_assert(StageValues % kChunk == 0, "whole chunks per stage");
  static_assert(F::kBlockValues % kChunk == 0 || kChunk % F::kBlockValues == 0, "chunks of whole blocks");
  static_assert(Pairs == 64 || Pairs == 128, "wgmma N of the wrapped shapes, one producer thread per pair");
  static_assert(kCtaCols == 2 * kConsumerRows, "two consumers of 64 rows");
  static_assert(Ops == 1 || kCtaCols == 2 * kQ10BlockValues, "gate/up: the CTA's rows are one requant block");
  static_assert(ActSlots >= 2, "the producer fills a chunk while the consumers read one");
  static_assert(kPieceRounds % 2 == 0, "whole rows of pieces per thread (two rounds of four pieces)");
  static_assert(128 * (kProducerRegisters + 2 * kConsumerRegisters) <= kThreads * kLaunchRegisters,
                "setmaxnreg cannot hand out more registers than the launch gave");
};

template <class Tile>
struct HopperQ10TnActSlot {
  alignas(128) uint8_t codes[Tile::kActBytes];  // [pair / 8][k / 8][pair % 8][8] f16 core matrices
  alignas(16) float scale[Tile::kPairs];        // [pair] the chunk's activation scale
};

template <class F, class Tile>
struct HopperQ10TnShared {
  uint64_t raw_full[Tile::kStages];     // producer -> consumers: the raw slot's bytes have landed
  uint64_t raw_empty[Tile::kStages];    // consumers -> producer: the raw slot has been decoded
  uint64_t act_full[Tile::kActSlots];   // producer -> consumers: the chunk's codes have landed
  uint64_t act_empty[Tile::kActSlots];  // consumers -> producer: the chunk's products are done
  HopperQ10Item items[Tile::kItemSlots];
  // gate/up epilogue: per consumer warp and pair, the amax and the code sum of its 8 features
  float red_max[Tile::kOps == 2 ? Tile::kConsumerWarps : 1][Tile::kPairs];
  int32_t red_sum[Tile::kOps == 2 ? Tile::kConsumerWarps : 1][Tile::kPairs];
  alignas(16) uint32_t table[FragmentChunk<F>::kTableWords];
  alignas(128) HopperQ10RawSlot<Tile> raw_slot[Tile::kStages];
  alignas(128) HopperQ10TnActSlot<Tile> act_slot[Tile::kActSlots];
};

template <class F, class Tile>
constexpr size_t hopper_q10_tn_shared_bytes() {
  return sizeof(HopperQ10TnShared<F, Tile>);
}

// CTA column (raw slot order, hopper_q10_slot_row) of consumer c's row 16 warp + group + 8 h:
// gate/up put gate (h = 0) and up (h = 1) of feature 32 c + 8 warp + group there.
template <class Tile>
__device__ __forceinline__ int hopper_q10_tn_column(int c, int warp, int group, int h) {
  if constexpr (Tile::kOps == 2) return 2 * (32 * c + 8 * warp + group) + h;
  else return Tile::kConsumerRows * c + 16 * warp + group + 8 * h;
}

// ---- producer ------------------------------------------------------------------------------------
// Per raw stage: its raw blocks, then its chunks of activation codes. A chunk is kPairs rows of 128
// bytes, moved as 16-byte cp.async pieces: piece round i of thread pt (warp w, lane l) is piece
// 4 (i % 2) + l % 4 of pair 8 ((i / 2) 4 + w) + l / 4, so that one warp instruction reads eight
// rows' 64 contiguous bytes each. Pairs past the tile's get zeros. Thread pt < kPairs also moves
// pair pt's scale. Each thread's arrival on the chunk's `full` barrier comes when its copies have
// landed (cp.async.mbarrier.arrive); the producer never waits for its own copies.
template <class F, class Tile, bool kTma>
__device__ __forceinline__ void hopper_q10_tn_producer(const HopperQ10Args& a, HopperQ10TnShared<F, Tile>& sm, int pt,
                                                       int64_t n_items, int col_blocks, int n_stages) {
  const Q10ProductArgs& args = a.p;
  uint32_t raw_use = 0, act_use = 0, item_use = 0;
  const int act_blocks_per_row = args.in_features / kQ10BlockValues;
  const int warp = pt / 32, lane = pt % 32;
  constexpr int kRows = Tile::kPieceRounds / 2;  // pairs (rows) per thread
  for (int64_t item = blockIdx.x; item < n_items; item += gridDim.x, ++item_use) {
    const HopperQ10Item w = hopper_q10_item<Tile>(args, item, col_blocks);
    auto row_of = [&](int pair) -> int64_t {  // the pair's activation row (0 past the tile's pairs)
      if (pair >= w.pair_count) return 0;
      return args.pair_token != nullptr ? args.pair_token[w.pair_begin + pair] : w.pair_begin + pair;
    };
    const __half* codes[kRows];
    bool valid[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int pair = 8 * (4 * r + warp) + lane / 4;
      valid[r] = pair < w.pair_count;
      codes[r] = args.act_codes + row_of(pair) * args.in_features + 8 * (lane % 4);
    }
    const bool has_scale = pt < Tile::kPairs && pt < w.pair_count;
    const float* scales = args.act_scales + (pt < Tile::kPairs ? row_of(pt) : 0) * act_blocks_per_row;
    for (int stage = 0; stage < n_stages; ++stage) {
      hopper_q10_raw_stage<Tile, kTma>(a, sm, pt, w, stage, raw_use++, item_use);
      for (int cis = 0; cis < Tile::kChunksPerStage; ++cis, ++act_use) {
        const int s = static_cast<int>(act_use % Tile::kActSlots);
        if (act_use >= Tile::kActSlots) mbarrier_wait(&sm.act_empty[s], ((act_use / Tile::kActSlots) - 1) & 1u);
        HopperQ10TnActSlot<Tile>& slot = sm.act_slot[s];
        const int chunk = stage * Tile::kChunksPerStage + cis;  // within the row
#pragma unroll
        for (int i = 0; i < Tile::kPieceRounds; ++i) {
          const int pair = 8 * (4 * (i / 2) + warp) + lane / 4, k8 = 4 * (i % 2) + lane % 4;
          cp_async_16(slot.codes + (pair / 8) * Tile::kCoreStrideBytes + k8 * Tile::kCoreLeadingBytes + (pair % 8) * 16,
                      codes[i / 2] + chunk * Tile::kChunk + 32 * (i % 2), valid[i / 2]);
        }
        if (pt < Tile::kPairs) cp_async_4(&slot.scale[pt], scales + chunk, has_scale);
        cp_async_mbarrier_arrive(&sm.act_full[s]);
      }
    }
  }
  cp_async_wait<0>();
}

template <class F, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, 1) hopper_q10_tn_kernel(const __grid_constant__ HopperQ10Args a) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(WideBlockFormat<F>, "the q10 kernels read the format's wide decode");
  using Span = mma::SpanMma<F>;  // NOTE: refuses formats whose span could reach 2^24
  static_assert(Span::kSteps == Tile::kSteps, "one wgmma k16 step per 16 values of the span");
  using Chunk = FragmentChunk<F>;
  extern __shared__ __align__(128) uint8_t shared_raw[];
  HopperQ10TnShared<F, Tile>& sm = *reinterpret_cast<HopperQ10TnShared<F, Tile>*>(shared_raw);
  const Q10ProductArgs& args = a.p;

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  const int n_stages = args.in_features / Tile::kStageValues;
  const int col_blocks = (Tile::kOps * args.out_rows + Tile::kCtaCols - 1) / Tile::kCtaCols;
  const int64_t n_items = static_cast<int64_t>(args.tile_offsets[args.n_expert]) * col_blocks;

  for (int i = tid; i < Chunk::kTableWords; i += Tile::kThreads) sm.table[i] = Chunk::table_word(i);
  // The raw slots start as zeros (rows past the tensor's rows decode defined bytes; see below).
  static_assert(sizeof(sm.raw_slot) % sizeof(uint4) == 0, "raw slots of whole 16-byte units");
  for (int i = tid; i < static_cast<int>(sizeof(sm.raw_slot) / sizeof(uint4)); i += Tile::kThreads)
    reinterpret_cast<uint4*>(sm.raw_slot)[i] = make_uint4(0u, 0u, 0u, 0u);
  fence_proxy_async_shared();
  init_stage_ring(sm.raw_full, sm.raw_empty, 128, 256);  // producer -> two consumers
  init_stage_ring(sm.act_full, sm.act_empty, 128, 256);
  __syncthreads();

  if (warpgroup == 0) {
    setmaxnreg_decrease<Tile::kProducerRegisters>();
    if (Tile::kRawTma && a.raw_tma != 0)
      hopper_q10_tn_producer<F, Tile, Tile::kRawTma>(a, sm, tid, n_items, col_blocks, n_stages);
    else
      hopper_q10_tn_producer<F, Tile, false>(a, sm, tid, n_items, col_blocks, n_stages);
    return;
  }

  // ---- consumers -------------------------------------------------------------------------------
  setmaxnreg_increase<Tile::kConsumerRegisters>();
  const int c = warpgroup - 1;     // consumer index: rows [64 c, 64 c + 64) of the item
  const int t = tid - 128 * warpgroup;
  const int warp = t / 32, lane = t % 32;
  const int group = lane / 4, tig = lane % 4;
  const int n_chunks = n_stages * Tile::kChunksPerStage;
  uint32_t raw_use = 0, act_use = 0, item_use = 0;  // slot uses of the items before this one

  float dot[Tile::kAccRegs];
#pragma unroll
  for (int r = 0; r < Tile::kAccRegs; ++r) dot[r] = 0.0f;

  for (int64_t item = blockIdx.x; item < n_items; item += gridDim.x, ++item_use) {
    mbarrier_wait(&sm.raw_full[raw_use % Tile::kStages], (raw_use / Tile::kStages) & 1u);
    const HopperQ10Item w = sm.items[item_use % Tile::kItemSlots];
    // This thread's two weight rows: their slot rows and where their bytes sit in them (the low
    // address bits of the weight row, 0 where TMA boxes move the stages or past the tensor's rows).
    // NOTE: a row past the tensor's rows decodes whatever its slot row holds (zeros from the
    // kernel's start or a TMA box's out-of-bounds fill, or an earlier item's row); row m of D
    // reads only row m of A, and no output of such a row is stored.
    const uint8_t* row_bytes[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int n = hopper_q10_tn_column<Tile>(c, warp, group, h);
      int op = 0;
      const uint8_t* row = hopper_q10_row<Tile>(args, w, n, op);
      const uint32_t low = row == nullptr ? 0u : static_cast<uint32_t>(reinterpret_cast<uintptr_t>(row) & 15u);
      row_bytes[h] = sm.raw_slot[0].raw[hopper_q10_slot_row<Tile>(n)] + low;
    }
    // Decodes chunk u's share of both rows into (frag, w_scale); after a stage's last chunk the raw
    // slot goes back. Chunk 0's stage was waited for above; each later stage before its first chunk.
    auto decode = [&](int u, uint32_t (&frag)[Tile::kSteps][4], float (&w_scale)[2]) {
      const int stage = u / Tile::kChunksPerStage, cis = u % Tile::kChunksPerStage;
      const uint32_t raw_at = raw_use + stage;
      const uint32_t raw_index = raw_at % Tile::kStages;
      if (cis == 0 && u > 0) mbarrier_wait(&sm.raw_full[raw_index], (raw_at / Tile::kStages) & 1u);
      const int value = cis * Tile::kChunk;  // within the stage
      const size_t slot_offset = raw_index * sizeof(HopperQ10RawSlot<Tile>);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        // The stage's bytes start (row low bits + stage * kRawBytes) mod 16 into the slot row.
        const uintptr_t at = reinterpret_cast<uintptr_t>(row_bytes[h]) + slot_offset;
        const uint8_t* stage_bytes = reinterpret_cast<const uint8_t*>(
            (at & ~uintptr_t{15}) + ((at + static_cast<uintptr_t>(stage) * Tile::kRawBytes) & 15u));
        uint32_t words[8];
        Chunk::decode(stage_bytes + (value / F::kBlockValues) * F::kBlockBytes, (value % F::kBlockValues) / Tile::kChunk,
                      tig, sm.table, words, w_scale[h]);
#pragma unroll
        for (int s = 0; s < Tile::kSteps; ++s) {
          frag[s][h] = words[2 * s];          // k 2 tig .. + 1 of step s
          frag[s][2 + h] = words[2 * s + 1];  // k 2 tig + 8 .. + 9
        }
      }
      if (cis == Tile::kChunksPerStage - 1) mbarrier_arrive(&sm.raw_empty[raw_index]);
    };

    float acc[Tile::kAccRegs];
#pragma unroll
    for (int r = 0; r < Tile::kAccRegs; ++r) acc[r] = 0.0f;
    const int live_groups = (w.pair_count + 7) / 8;  // 8-pair column groups holding pairs

    // One chunk u: its products from frag, the next chunk's decode into next_frag meanwhile, the fold.
    auto chunk_step = [&](int u, uint32_t (&frag)[Tile::kSteps][4], const float (&w_scale)[2],
                          uint32_t (&next_frag)[Tile::kSteps][4], float (&next_scale)[2]) {
      const uint32_t act_at = act_use + u;
      const int s = static_cast<int>(act_at % Tile::kActSlots);
      mbarrier_wait(&sm.act_full[s], (act_at / Tile::kActSlots) & 1u);
      fence_proxy_async_shared();  // the producer's cp.async writes, before the tensor cores read them
      const HopperQ10TnActSlot<Tile>& slot = sm.act_slot[s];
      const uint32_t b_base = shared_address(slot.codes);
      // ---- the chunk's exact integer span dot: 4 wgmma k16 steps, the accumulator restarted -----
      mma::fence_accumulators(dot);
      mma::wgmma_fence();
#pragma unroll
      for (int step = 0; step < Tile::kSteps; ++step) {
        const uint64_t desc = mma::wgmma_desc(b_base + 2 * step * Tile::kCoreLeadingBytes, Tile::kCoreLeadingBytes,
                                              Tile::kCoreStrideBytes);
        Span::template step_wgmma_rs<Tile::kPairs>(dot, frag[step], desc, step);
      }
      mma::wgmma_commit();
      if (u + 1 < n_chunks) decode(u + 1, next_frag, next_scale);  // while the products run
      mma::wgmma_wait<0>();
      mma::fence_accumulators(dot);
      // NOTE: the products read frag asynchronously: it stays live (not reused for the decode's
      // registers) until they are complete.
#pragma unroll
      for (int step = 0; step < Tile::kSteps; ++step) mma::fence_registers(frag[step]);
      // ---- fold: fold_span<F>'s operations, one for one --------------------------------------------
#pragma unroll
      for (int j = 0; j < Tile::kPairGroups; ++j) {
        if (j < live_groups) {
          const float2 a_scale = *reinterpret_cast<const float2*>(&slot.scale[8 * j + 2 * tig]);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = 4 * j + 2 * h;
            acc[r] = fmaf(dot[r], w_scale[h] * a_scale.x, acc[r]);
            acc[r + 1] = fmaf(dot[r + 1], w_scale[h] * a_scale.y, acc[r + 1]);
          }
        }
      }
      mbarrier_arrive(&sm.act_empty[s]);  // products done, scales read
    };

    uint32_t frag0[Tile::kSteps][4], frag1[Tile::kSteps][4];
    float scale0[2], scale1[2];
    decode(0, frag0, scale0);
#pragma unroll 1
    for (int u = 0; u < n_chunks; u += 2) {
      chunk_step(u, frag0, scale0, frag1, scale1);
      if (u + 1 < n_chunks) chunk_step(u + 1, frag1, scale1, frag0, scale0);
    }
    raw_use += n_stages;
    act_use += n_chunks;

    // ---- epilogue ----------------------------------------------------------------------------
    if constexpr (Tile::kOps == 2) {
      // Lane holds gate (h = 0) and up (h = 1) of feature feature_base + 32 c + 8 warp + group for
      // pairs 8 j + 2 tig + e; the CTA's 64 features are the pairs' requantisation block.
      const int f = args.out_rows;
      const int feature_base = w.col_begin / 2;
      const int feature = feature_base + 32 * c + 8 * warp + group;
      const int n_blocks = f / kQ10BlockValues;
      const int cw = 4 * c + warp;  // consumer warp
      float hv[Tile::kAccRegs / 2];
#pragma unroll
      for (int j = 0; j < Tile::kPairGroups; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float v = swiglu(acc[4 * j + e], acc[4 * j + 2 + e]);
          hv[2 * j + e] = v;
          float m = fabsf(v);  // the warp's 8 features of this pair: over the lanes of one tig
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 4));
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 8));
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
          if (group == 0) sm.red_max[cw][8 * j + 2 * tig + e] = m;
        }
      named_barrier_sync(1, 256);
      int code[Tile::kAccRegs / 2];
      float scale[Tile::kAccRegs / 2];
#pragma unroll
      for (int j = 0; j < Tile::kPairGroups; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int pair = 8 * j + 2 * tig + e;
          float amax = 0.0f;
#pragma unroll
          for (int q = 0; q < Tile::kConsumerWarps; ++q) amax = fmaxf(amax, sm.red_max[q][pair]);
          // NOTE: the operations of quantize_block_q10 (pipeline/arith_q10.hpp), one for one.
          const float s = amax / static_cast<float>(kQ10MaxCode);
          float rq = (s == 0.0f) ? 0.0f : roundf(hv[2 * j + e] / s);
          rq = fminf(fmaxf(rq, -static_cast<float>(kQ10MaxCode)), static_cast<float>(kQ10MaxCode));
          code[2 * j + e] = static_cast<int>(rq);
          scale[2 * j + e] = s;
          int sum = code[2 * j + e];
          sum += __shfl_xor_sync(0xffffffffu, sum, 4);
          sum += __shfl_xor_sync(0xffffffffu, sum, 8);
          sum += __shfl_xor_sync(0xffffffffu, sum, 16);
          if (group == 0) sm.red_sum[cw][pair] = sum;
        }
      named_barrier_sync(1, 256);
#pragma unroll
      for (int j = 0; j < Tile::kPairGroups; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int pair = 8 * j + 2 * tig + e;
          if (pair >= w.pair_count || feature_base >= f) continue;  // f % 64 == 0: all 64 valid or none
          const int64_t out_row = static_cast<int64_t>(w.pair_begin) + pair;
          const int64_t at = out_row * f + feature;
          args.h_codes[at] = __int2half_rn(code[2 * j + e]);
          if (args.h_out != nullptr) args.h_out[at] = hv[2 * j + e];
          if (args.gate_out != nullptr) args.gate_out[at] = acc[4 * j + e];
          if (args.up_out != nullptr) args.up_out[at] = acc[4 * j + 2 + e];
          // The pair's scale and its four 16-feature sums (warps 2q, 2q + 1): by one lane each.
          if (cw == 0 && group == 0) args.h_scales[out_row * n_blocks + feature_base / kQ10BlockValues] = scale[2 * j + e];
          if (group == 1 && cw < 4)
            args.h_sums[out_row * (f / kQ10SumValues) + feature_base / kQ10SumValues + cw] =
                sm.red_sum[2 * cw][pair] + sm.red_sum[2 * cw + 1][pair];
        }
    } else {
      const int rows = args.out_rows;
#pragma unroll
      for (int j = 0; j < Tile::kPairGroups; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int pair = 8 * j + 2 * tig + e;
          if (pair >= w.pair_count) continue;
          float* out = args.down_out + (static_cast<int64_t>(w.pair_begin) + pair) * rows;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = w.col_begin + hopper_q10_tn_column<Tile>(c, warp, group, h);
            if (row < rows) out[row] = acc[4 * j + 2 * h + e];
          }
        }
    }
  }
#else
  (void)a;
  __trap();
#endif
}

}  // namespace strata::cuda::fused_q10
