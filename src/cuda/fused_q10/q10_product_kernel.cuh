// Device code of the q10 fused kernels (included by the per-format instantiation files): one
// product kernel, two epilogues.
//
// A persistent grid walks the work items (pair tile of an expert's sorted pairs x block of weight
// rows), from the tile offsets built on the device. Per item and per 64-value K stage (one
// activation block):
//   - the f16 activation codes and the block scale of the tile's pairs (and, for offset formats,
//     their code sums per 16) are gathered with cp.async, kActStages stages in flight (zero-filled
//     past the expert's last pair and past K);
//   - the weights of stage s + 1 are decoded by 32-value pieces with the Hopper kernels' piece
//     decoders (HalfPiece<F>, hopper_q10_decode.hpp: f16 integers w, |w| <= W_f, their lookup
//     table in shared memory, one scale (and offset) per (row, span)) into a double-buffered f16
//     shared tile of 144-byte rows after the tensor cores multiply stage s; they read the raw
//     blocks from global memory, or, on gate/up's staged tile (Q10LargeStaged, kQ10Staged), from
//     two shared slots of 256 values a row that cp.async fills with the activation stages;
//   - the tensor cores' fragments come from shared memory by ldmatrix (x4: one m16 weight tile,
//     or two n8 code tiles, per k16 step);
//   - each span of S values is S/16 chained mma.sync m16n8k16 f16 from a fresh accumulator
//     (SpanMma<F>: exact integer span dots, the 2^24 guard at compile time), folded into fp32 by
//     fold_span<F> strictly in span order (offset formats: the span's activation code sum, the
//     int32 sum of its per-16 sums as the CPU arms form it, times the span's offset).
// Gate/up epilogue: in each m16 tile rows 0-7 are gate and rows 8-15 the up rows of the same 8
// features, so a lane holds gate (c0/c1) and up (c2/c3) of one (feature, pair); h = swiglu(g, u)
// is requantised per 64 features (two warps along M: their amax meet in shared memory) by the
// operations of quantize_block_q10. Down epilogue: one fp32 row per sorted pair.
// K is a multiple of the format's block and of 32: when K % 64 == 32 the last stage is the
// row's short 32-value activation block, and its spans past K are neither decoded nor folded.
// NOTE: no split-K, no reordering of spans: the bits are the q10 CPU arms'.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda/common/check.hpp"
#include "cuda/common/persistent_launch.hpp"
#include "cuda/common/ptx.cuh"
#include "cuda/fused_q10/q10_products.hpp"
#include "cuda/fused_q10/hopper_q10_decode.hpp"
#include "cuda/fused_q10/tile_config.hpp"
#include "cuda/mma/span_mma.cuh"
#include "cuda/pipeline/tile_lookup.hpp"
#include "formats/format.hpp"
#include "formats/iq2_s.hpp"
#include "formats/iq2_xs.hpp"
#include "formats/iq2_xxs.hpp"
#include "formats/iq3_xxs.hpp"
#include "formats/iq4_xs.hpp"
#include "formats/q1_0.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/arith_q10.hpp"

namespace strata::cuda::fused_q10 {

enum class Epilogue { kSwigluRequant, kStoreRows };

// Shared memory a staged tile (Q10LargeStaged) may take: two CTAs on an SM of 228 KB (sm_90; 1 KB
// of each CTA's is the system's).
inline constexpr size_t kQ10StagedSharedBytes = (228 * 1024) / 2 - 1024;

// The bytes of one row's raw stage: kRawStageValues values of format F, whole blocks.
template <class F, class Tile>
inline constexpr int kQ10RawBytes = Tile::kRawStageValues / F::kBlockValues * F::kBlockBytes;

// The bytes of a staged tile's raw slot rows, 16 for the others (q10_raw_stride, after Q10Shared).
template <class F, class Tile>
constexpr int q10_raw_stride();

template <class F, class Tile>
struct Q10Shared {
  static constexpr int kSpansPerStage = Tile::kStageValues / F::kWideSpan;
  static constexpr int kSumsPerStage = Tile::kStageValues / kQ10SumValues;
  // The offset term's operands, for offset formats only (one unused element otherwise).
  static constexpr int kOffsetSpans = F::kHasOffset ? kSpansPerStage : 1;
  static constexpr int kOffsetSums = F::kHasOffset ? kSumsPerStage : 1;
  alignas(16) uint32_t table[HalfPiece<F>::kTableWords];  // the decode's lookup table
  alignas(16) __half weights[2][Tile::kWeightRows][Tile::kRowStrideHalves];  // [buf][row][k] f16
  // The raw stages (Tile::kRawStaged): the bytes of kRawStageValues values of each shared row, at
  // (their address mod 16) into the slot row, as fused_hopper::span_copy_plan places them, so that
  // the decode meets them at the alignment it meets in global memory. One unused unit otherwise.
  static constexpr int kRawBytes = kQ10RawBytes<F, Tile>;
  static constexpr int kRawStride = q10_raw_stride<F, Tile>();
  alignas(16) uint8_t raw[Tile::kRawStaged ? Tile::kRawSlots : 1][Tile::kRawStaged ? Tile::kWeightRows : 1]
                         [kRawStride];  // [slot][row][byte]
  alignas(16) __half acts[Tile::kActStages][Tile::kPairs][Tile::kRowStrideHalves];  // [slot][pair]
  alignas(16) int32_t act_sums[Tile::kActStages][Tile::kPairs][kOffsetSums];  // [slot][pair][16s]
  float act_scale[Tile::kActStages][Tile::kPairs];                           // [slot][pair]
  float weight_scale[2][Tile::kWeightRows][kSpansPerStage];                  // [buf][row][span]
  float weight_offset[2][Tile::kWeightRows][kOffsetSpans];                   // [buf][row][span]
  float amax[Tile::kWarpsM][Tile::kPairs];                                   // requant exchange
};

// A staged tile's slot rows: a multiple of 16 bytes (cp.async) of at least n + 15 (the n bytes start
// up to 15 into the row; every aligned word or 16-byte unit around them lies inside). A decode task
// per lane reads one offset of 16 rows: rows an odd number of 16-byte units apart meet two to a
// bank, 2 mod 4 units apart four, a multiple of 64 bytes eight or more (IQ3_S's raw stage in rows of
// 128 bytes: the layer 1.3x its time, bench/results/2026-12-06.md, call 56). So the smallest odd
// number of units, or where that does not fit beside two CTAs (Q4_K, NVFP4: 176 bytes) the smallest
// of 2 mod 4 units (160: measured faster than not staging, call 56).
template <class F, class Tile>
constexpr int q10_raw_stride() {
  if constexpr (!Tile::kRawStaged) {
    return 16;
  } else {
    using Unstaged = Q10Tile<Tile::kWeightRows, Tile::kPairs, Tile::kWarpsM, Tile::kWarpsN, Tile::kActStages,
                             Tile::kMinBlocksPerSm, false>;
    constexpr int n = kQ10RawBytes<F, Tile>;
    constexpr int least = (n + 15 + 15) / 16 * 16;
    constexpr int odd = (least / 16) % 2 == 1 ? least : least + 16;
    constexpr size_t rest = sizeof(Q10Shared<F, Unstaged>);
    if (rest + static_cast<size_t>(Tile::kRawSlots) * Tile::kWeightRows * odd <= kQ10StagedSharedBytes) return odd;
    return (least / 16) % 4 == 2 ? least : odd;
  }
}

template <class F, class Tile, Epilogue kEpilogue>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    q10_product_kernel(const Q10ProductArgs args) {
  static_assert(WideBlockFormat<F>, "the q10 kernels read the format's wide decode");
  static_assert(Tile::kStageValues % F::kWideSpan == 0, "whole spans per stage");
  static_assert(
      F::kBlockValues % Tile::kStageValues == 0 || Tile::kStageValues % F::kBlockValues == 0,
      "stages and blocks nest");
  using Span = mma::SpanMma<F>;  // NOTE: refuses formats whose span could reach 2^24
  using Shared = Q10Shared<F, Tile>;
  using Piece = HalfPiece<F>;  // the decode unit: one 32-value piece as f16 pairs
  constexpr int S = F::kWideSpan;
  constexpr int kSpansPerStage = Shared::kSpansPerStage;
  constexpr bool kGateUp = kEpilogue == Epilogue::kSwigluRequant;
  constexpr int kRowsPerItem = kGateUp ? Tile::kWeightRows / 2 : Tile::kWeightRows;  // output rows
  // A piece holds kPieceSpans spans (S <= 32) or half of one (S = 64: both halves give its scale).
  constexpr int kPieceSpans = fused_q10::kPieceSpans<F>;
  constexpr int kPiecesPerStage = Tile::kStageValues / 32;
  constexpr int kDecodeTasks = Tile::kWeightRows * kPiecesPerStage;  // per stage
  constexpr int kChunksPerPair = Tile::kStageValues * 2 / 16;      // 16-byte copies
  constexpr int kCopiesPerThread = (Tile::kActChunks + Tile::kThreads - 1) / Tile::kThreads;
  // Offset formats: the stage's 4 code sums of a pair come with its scale, by the same thread, as
  // two 8-byte copies (rows of K/16 int32 with K % 32 == 0 start 8-byte aligned).
  static_assert(!F::kHasOffset || Shared::kOffsetSums == 4, "4 sums per 64-value stage");
  extern __shared__ __align__(16) uint8_t shared_raw[];
  Shared& sm = *reinterpret_cast<Shared*>(shared_raw);

  const int K = args.in_features, out_rows = args.out_rows;
  // The last stage holds 32 values when K % 64 == 32 (the row's short activation block).
  const int n_stages = (K + Tile::kStageValues - 1) / Tile::kStageValues;
  const int blocks_per_act_row = static_cast<int>(q10_blocks_per_row(K));
  const int sums_per_act_row = K / kQ10SumValues;
  const int row_blocks = (out_rows + kRowsPerItem - 1) / kRowsPerItem;
  const int64_t n_items = static_cast<int64_t>(args.tile_offsets[args.n_expert]) * row_blocks;

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int group = lane / 4, tig = lane % 4;
  const int warp_m = warp % Tile::kWarpsM, warp_n = warp / Tile::kWarpsM;
  // visible after the first item's barrier
  for (int i = tid; i < Piece::kTableWords; i += Tile::kThreads) sm.table[i] = Piece::table_word(i);

  for (int64_t item = blockIdx.x; item < n_items; item += gridDim.x) {
    // ---- which expert, pairs and weight rows -----------------------------------------------
    const int32_t tile = static_cast<int32_t>(item / row_blocks);
    const int row_begin = static_cast<int>(item % row_blocks) * kRowsPerItem;  // feature or d row
    const int expert = expert_of_tile(args.tile_offsets, args.n_expert + 1, tile);
    const int32_t pair_begin =
        args.expert_offsets[expert] + (tile - args.tile_offsets[expert]) * Tile::kPairs;
    const int pair_count = min(Tile::kPairs, args.expert_offsets[expert + 1] - pair_begin);
    // gate (or down) and up rows of the expert; up is unused by down.
    const uint8_t* gate_weights =
        args.weights[0] + static_cast<size_t>(expert) * args.expert_stride_bytes[0];
    const uint8_t* up_weights =
        kGateUp ? args.weights[1] + static_cast<size_t>(expert) * args.expert_stride_bytes[1]
                : gate_weights;

    // Each thread copies fixed 16-byte chunks (and maybe one scale) of every stage: chunk c of a
    // stage is part c % kChunksPerPair of pair c / kChunksPerPair. Their sources, at the stage's
    // offset 0, once per item (unsigned: the divisions are shifts).
    const __half* copy_src[kCopiesPerThread];
    bool copy_valid[kCopiesPerThread];
#pragma unroll
    for (int i = 0; i < kCopiesPerThread; ++i) {
      const unsigned chunk = tid + i * Tile::kThreads, pair = chunk / kChunksPerPair;
      copy_valid[i] = chunk < Tile::kActChunks && static_cast<int>(pair) < pair_count;
      const int64_t row = !copy_valid[i]               ? 0
                          : args.pair_token != nullptr ? args.pair_token[pair_begin + pair]
                                                       : static_cast<int64_t>(pair_begin) + pair;
      copy_src[i] = args.act_codes + row * K + 8 * (chunk % kChunksPerPair);
    }
    // Each thread's decode tasks (shared row r, 32-value piece) are the same in every stage of the
    // item: their weight rows (null past the tensor's rows), once per item. Shared row r: gate/up,
    // feature row_begin + 8*(r/16) + r%8 of gate (r%16 < 8) or up; down, row row_begin + r.
    static_assert(kDecodeTasks % Tile::kThreads == 0,
                  "every thread decodes as many pieces per stage");
    constexpr int kTasksPerThread = kDecodeTasks / Tile::kThreads;
    const uint8_t* task_row[kTasksPerThread];
#pragma unroll
    for (int i = 0; i < kTasksPerThread; ++i) {
      const unsigned r = (tid + i * Tile::kThreads) / kPiecesPerStage;
      const int out_row = row_begin + static_cast<int>(kGateUp ? 8 * (r / 16) + r % 8 : r);
      const uint8_t* tensor_base = kGateUp && (r % 16) >= 8 ? up_weights : gate_weights;
      task_row[i] = out_row < out_rows
                        ? tensor_base + static_cast<size_t>(out_row) * args.row_bytes
                        : nullptr;
    }
    const bool scale_thread = tid < Tile::kPairs;
    const bool scale_valid = scale_thread && tid < pair_count;
    const int64_t scale_row = !scale_valid                 ? 0
                              : args.pair_token != nullptr ? args.pair_token[pair_begin + tid]
                                                           : static_cast<int64_t>(pair_begin) + tid;

    __syncthreads();  // the previous item's readers are done with every shared buffer

    // Raw stage q (Tile::kRawStaged) of every shared row into slot q % 2: one 16-byte cp.async per
    // aligned unit inside the expert's matrix; a unit that is not wholly inside it (a matrix that
    // does not start or end on 16 bytes) by ordinary loads of the bytes that are. Bytes past the
    // row's end, which no decode reads, are the next row's or not copied.
    [[maybe_unused]] auto issue_raw = [&](int q) {
      constexpr int kUnits = Shared::kRawStride / 16;
      for (int unit = tid; unit < Tile::kWeightRows * kUnits; unit += Tile::kThreads) {
        const int r = unit / kUnits;
        const int out_row = row_begin + static_cast<int>(kGateUp ? 8 * (r / 16) + r % 8 : r);
        if (out_row >= out_rows) continue;
        const uint8_t* matrix = kGateUp && (r % 16) >= 8 ? up_weights : gate_weights;
        const uintptr_t src = reinterpret_cast<uintptr_t>(matrix) + static_cast<size_t>(out_row) * args.row_bytes +
                              static_cast<size_t>(q) * Shared::kRawBytes;
        const uintptr_t at = (src & ~uintptr_t{15}) + 16 * static_cast<uintptr_t>(unit % kUnits);
        if (at >= src + Shared::kRawBytes) continue;  // past the stage's bytes
        const uintptr_t lo = reinterpret_cast<uintptr_t>(matrix);
        const uintptr_t hi = lo + static_cast<size_t>(out_rows) * args.row_bytes;
        uint8_t* dst = &sm.raw[q % Tile::kRawSlots][r][16 * (unit % kUnits)];
        if (at >= lo && at + 16 <= hi) {
          cp_async_16(dst, reinterpret_cast<const void*>(at), true);
        } else {
          for (int b = 0; b < 16; ++b)
            if (at + b >= lo && at + b < hi) dst[b] = *reinterpret_cast<const uint8_t*>(at + b);
        }
      }
    };

    // Activation stage `stage`, and with it (Tile::kRawStaged) the raw stage whose first weight
    // stage is stage + 1: in one cp.async group, so that the activation stage's wait covers both.
    auto issue_acts = [&](int stage) {
      if constexpr (Tile::kRawStaged)
        if ((stage + 1) % Tile::kStagesPerRaw == 0 && stage + 1 < n_stages) issue_raw((stage + 1) / Tile::kStagesPerRaw);
      if (stage < n_stages) {
        const int slot = stage % Tile::kActStages;
#pragma unroll
        for (int i = 0; i < kCopiesPerThread; ++i) {
          const unsigned chunk = tid + i * Tile::kThreads;
          if (chunk < Tile::kActChunks) {
            const unsigned pair = chunk / kChunksPerPair, part = chunk % kChunksPerPair;
            const int k = stage * Tile::kStageValues + static_cast<int>(8 * part);
            cp_async_16(&sm.acts[slot][pair][8 * part], copy_src[i] + stage * Tile::kStageValues,
                        copy_valid[i] && k < K);
          }
        }
        if (scale_thread) {
          cp_async_4(&sm.act_scale[slot][tid],
                     args.act_scales + scale_row * blocks_per_act_row + stage, scale_valid);
          if constexpr (F::kHasOffset) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
              const int sum = stage * Shared::kSumsPerStage + 2 * half;  // first of the two
              cp_async_8(&sm.act_sums[slot][tid][2 * half],
                         args.act_sums + scale_row * sums_per_act_row + sum,
                         scale_valid && sum < sums_per_act_row);
            }
          }
        }
      }
      cp_async_commit();  // an empty group past the end keeps the wait counts uniform
    };

    // Decode task = (shared row r, 32-value piece of the stage), task_row above.
    auto decode_stage = [&](int stage, int buf) {
#pragma unroll
      for (int i = 0; i < kTasksPerThread; ++i) {
        const unsigned task = tid + i * Tile::kThreads;
        const unsigned r = task / kPiecesPerStage, piece = task % kPiecesPerStage;
        uint32_t h2[16];
        WideScale scale[kPieceSpans];
        const unsigned k_value = stage * Tile::kStageValues + 32 * piece;  // its first value
        if (task_row[i] != nullptr && static_cast<int>(k_value) < K) {
          const uint8_t* block;
          if constexpr (Tile::kRawStaged) {  // its raw stage's slot, as issue_raw placed it
            const int q = stage / Tile::kStagesPerRaw;
            const uintptr_t src = reinterpret_cast<uintptr_t>(task_row[i]) + static_cast<size_t>(q) * Shared::kRawBytes;
            block = &sm.raw[q % Tile::kRawSlots][r][(src & 15u) + (k_value % Tile::kRawStageValues) /
                                                                       F::kBlockValues * F::kBlockBytes];
          } else {
            block = task_row[i] + static_cast<size_t>(k_value / F::kBlockValues) * F::kBlockBytes;
          }
          Piece::decode(block, (k_value % F::kBlockValues) / 32, sm.table, h2, scale);
        } else {
#pragma unroll
          for (int q = 0; q < 16; ++q) h2[q] = 0u;
#pragma unroll
          for (int j = 0; j < kPieceSpans; ++j) scale[j] = WideScale{0.0f, 0.0f};
        }
        uint4* dst = reinterpret_cast<uint4*>(&sm.weights[buf][r][32 * piece]);
#pragma unroll
        for (int q = 0; q < 4; ++q)
          dst[q] = make_uint4(h2[4 * q], h2[4 * q + 1], h2[4 * q + 2], h2[4 * q + 3]);
        if ((32 * piece) % S == 0) {  // the piece starts kPieceSpans spans of the stage
#pragma unroll
          for (int j = 0; j < kPieceSpans; ++j) {
            const int span = (32 * piece) / S + j;
            sm.weight_scale[buf][r][span] = scale[j].scale;
            if constexpr (F::kHasOffset) sm.weight_offset[buf][r][span] = scale[j].offset;
          }
        }
      }
    };

    // acc[mi][ni][c]: shared row 64*warp_m + 16*mi + group + 8*(c/2); pair
    // warp_n*kWarpPairs + 8*ni + 2*tig + c%2 (gate/up: gate for c = 0, 1 and up for c = 2, 3).
    float acc[Tile::kMmaM][Tile::kMmaN][4];
#pragma unroll
    for (int mi = 0; mi < Tile::kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[mi][ni][c] = 0.0f;

    // ---- pipeline prologue: kActStages - 1 activation stages in flight, weights of stage 0 ----
    if constexpr (Tile::kRawStaged) {  // raw stage 0 in a group of its own, before them
      issue_raw(0);
      cp_async_commit();
    }
#pragma unroll
    for (int i = 0; i < Tile::kActStages - 1; ++i) issue_acts(i);
    if constexpr (Tile::kRawStaged) {
      cp_async_wait<Tile::kActStages - 1>();  // raw stage 0 has landed (this thread's copies)
      __syncthreads();                        // everyone's
    }
    decode_stage(0, 0);

    for (int stage = 0; stage < n_stages; ++stage) {
      const int buf = stage & 1, slot = stage % Tile::kActStages;
      cp_async_wait<Tile::kActStages - 2>();  // this thread's copies of `stage` have landed
      __syncthreads();  // everyone's copies and the weights of `stage` visible; stage - 1 fully
                        // read
      issue_acts(stage + Tile::kActStages - 1);  // into the slot stage - 1 used

      float act_scale[Tile::kMmaN][2];
#pragma unroll
      for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
        for (int c = 0; c < 2; ++c)
          act_scale[ni][c] = sm.act_scale[slot][warp_n * Tile::kWarpPairs + 8 * ni + 2 * tig + c];

      // ---- the stage's spans: exact span dots, folded in span order ---------------------------
      const int stage_spans = min(kSpansPerStage, (K - stage * Tile::kStageValues) / S);
      // One span at a time: unrolled, the 128x64 tile spilled 20-104 bytes for formats of 2 or 4
      // spans per stage (Q2_K, Q4_K, IQ2_XXS, IQ3_XXS, IQ4_XS, MXFP4; nvcc 13, 128 registers).
#pragma unroll 1
      for (int sp = 0; sp < kSpansPerStage; ++sp) {
        if (sp >= stage_spans) break;  // past K in a short last stage: nothing to fold
        float dot[Tile::kMmaM][Tile::kMmaN][4];
#pragma unroll
        for (int step = 0; step < Span::kSteps; ++step) {
          // The fragments by ldmatrix: lane l gives the row of 8x8 matrix l / 8. A (weights, rows x
          // k): matrices (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) of the m16 tile;
          // B (codes, pairs x k): (n8 tile ni, k 0-7), (ni, 8-15), then the same for ni + 1.
          const int k = sp * S + 16 * step;
          uint32_t a[Tile::kMmaM][4];
          uint32_t b[Tile::kMmaN][2];
#pragma unroll
          for (int mi = 0; mi < Tile::kMmaM; ++mi) {
            const int row = warp_m * Tile::kWarpRows + 16 * mi + lane % 8 + 8 * ((lane / 8) % 2);
            ldmatrix_x4(a[mi][0], a[mi][1], a[mi][2], a[mi][3],
                        &sm.weights[buf][row][k + 8 * (lane / 16)]);
          }
#pragma unroll
          for (int ni = 0; ni + 1 < Tile::kMmaN; ni += 2) {
            const int pair = warp_n * Tile::kWarpPairs + 8 * (ni + lane / 16) + lane % 8;
            ldmatrix_x4(b[ni][0], b[ni][1], b[ni + 1][0], b[ni + 1][1],
                        &sm.acts[slot][pair][k + 8 * ((lane / 8) % 2)]);
          }
          if constexpr (Tile::kMmaN % 2 == 1) {  // the last n8 tile alone (rows from lanes 0-15)
            constexpr int ni = Tile::kMmaN - 1;
            const int pair = warp_n * Tile::kWarpPairs + 8 * ni + lane % 8;
            ldmatrix_x2(b[ni][0], b[ni][1], &sm.acts[slot][pair][k + 8 * ((lane / 8) % 2)]);
          }
#pragma unroll
          for (int mi = 0; mi < Tile::kMmaM; ++mi)
#pragma unroll
            for (int ni = 0; ni < Tile::kMmaN; ++ni)
              Span::step_m16n8k16(dot[mi][ni], a[mi], b[ni], step);
        }
        // Offset formats: the span's activation code sum per pair, int32 then fp32 (exact).
        float asum[Tile::kMmaN][2];
#pragma unroll
        for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            asum[ni][c] = 0.0f;
            if constexpr (F::kHasOffset) {
              const int pair = warp_n * Tile::kWarpPairs + 8 * ni + 2 * tig + c;
              int32_t total = 0;
#pragma unroll
              for (int i = 0; i < S / kQ10SumValues; ++i)
                total += sm.act_sums[slot][pair][sp * (S / kQ10SumValues) + i];
              asum[ni][c] = static_cast<float>(total);
            }
          }
#pragma unroll
        for (int mi = 0; mi < Tile::kMmaM; ++mi) {
          const int row = warp_m * Tile::kWarpRows + 16 * mi + group;
          WideScale lo{sm.weight_scale[buf][row][sp], 0.0f},
              hi{sm.weight_scale[buf][row + 8][sp], 0.0f};
          if constexpr (F::kHasOffset) {
            lo.offset = sm.weight_offset[buf][row][sp];
            hi.offset = sm.weight_offset[buf][row + 8][sp];
          }
#pragma unroll
          for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
            for (int c = 0; c < 4; ++c)
              acc[mi][ni][c] = fold_span<F>(acc[mi][ni][c], dot[mi][ni][c], asum[ni][c % 2],
                                            c < 2 ? lo : hi, act_scale[ni][c % 2]);
        }
      }

      // ---- weights of stage + 1 into the other buffer (last read at stage - 1, before the
      // barrier)
      if (stage + 1 < n_stages) decode_stage(stage + 1, buf ^ 1);
    }
    cp_async_wait<0>();  // no copy outlives the item (the empty tail groups included)

    if constexpr (kGateUp) {
      // ---- epilogue: SwiGLU in registers, h requantised per 64 features -----------------------
      // A warp holds 32 features (feature_base ..+31) of a 64-feature block; warps 2j and 2j + 1
      // along M hold its two halves. Features past f have zero weights, so h = 0 there and the
      // block's max is that of its valid values (a 32-value block at f's end, as the rule says).
      const int f = out_rows;
      const int feature_base = row_begin + 32 * warp_m;
      const bool features_valid = feature_base < f;  // f % 32 == 0: all 32 or none
      float h[Tile::kMmaN][2][Tile::kMmaM];
#pragma unroll
      for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          float amax = 0.0f;
#pragma unroll
          for (int mi = 0; mi < Tile::kMmaM; ++mi) {
            h[ni][c][mi] = swiglu(acc[mi][ni][c], acc[mi][ni][c + 2]);
            amax = quant_amax_step(amax, h[ni][c][mi]);
          }
          // Lanes of one tig hold the warp's other features: reduce over the group bits.
#pragma unroll
          for (int mask = 4; mask < 32; mask <<= 1)
            amax = quant_amax_merge(amax, __shfl_xor_sync(0xffffffffu, amax, mask));
          if (group == 0) sm.amax[warp_m][warp_n * Tile::kWarpPairs + 8 * ni + 2 * tig + c] = amax;
        }
      __syncthreads();
      const int n_blocks64 = static_cast<int>(q10_blocks_per_row(f));
#pragma unroll
      for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int pair = warp_n * Tile::kWarpPairs + 8 * ni + 2 * tig + c;
          // The max of a set is one value in any order (every partial started from 0.0f).
          const float amax = quant_amax_merge(sm.amax[warp_m & ~1][pair], sm.amax[warp_m | 1][pair]);
          // NOTE: the operations of quantize_block_q10 (pipeline/arith_q10.hpp), one for one.
          const float scale = amax / static_cast<float>(kQ10MaxCode);
          int code[Tile::kMmaM];
#pragma unroll
          for (int mi = 0; mi < Tile::kMmaM; ++mi) code[mi] = q10_code(scale == 0.0f ? 0.0f : h[ni][c][mi] / scale);
          static_assert(Tile::kMmaM == 4,
                        "mi 0-1 are features 0-15 of the warp (one sum), mi 2-3 features 16-31");
          int sum0 = code[0] + code[1], sum1 = code[2] + code[3];
#pragma unroll
          for (int mask = 4; mask < 32; mask <<= 1) {
            sum0 += __shfl_xor_sync(0xffffffffu, sum0, mask);
            sum1 += __shfl_xor_sync(0xffffffffu, sum1, mask);
          }
          if (features_valid && pair < pair_count) {
            const int64_t row = static_cast<int64_t>(pair_begin) + pair;
#pragma unroll
            for (int mi = 0; mi < Tile::kMmaM; ++mi) {
              const int64_t at = row * f + feature_base + 8 * mi + group;
              args.h_codes[at] = __int2half_rn(code[mi]);
              if (args.h_out != nullptr) args.h_out[at] = h[ni][c][mi];
              if (args.gate_out != nullptr) args.gate_out[at] = acc[mi][ni][c];
              if (args.up_out != nullptr) args.up_out[at] = acc[mi][ni][c + 2];
            }
            if (group == 0) {
              args.h_sums[row * (f / kQ10SumValues) + feature_base / kQ10SumValues] = sum0;
              args.h_sums[row * (f / kQ10SumValues) + feature_base / kQ10SumValues + 1] = sum1;
              if (warp_m % 2 == 0)
                args.h_scales[row * n_blocks64 + feature_base / kQ10BlockValues] = scale;
            }
          }
        }
    } else {
      // ---- epilogue: one fp32 row per sorted pair --------------------------------------------
#pragma unroll
      for (int mi = 0; mi < Tile::kMmaM; ++mi)
#pragma unroll
        for (int ni = 0; ni < Tile::kMmaN; ++ni)
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            const int out_row =
                row_begin + warp_m * Tile::kWarpRows + 16 * mi + group + 8 * (c / 2);
            const int pair = warp_n * Tile::kWarpPairs + 8 * ni + 2 * tig + c % 2;
            if (out_row < out_rows && pair < pair_count)
              args.down_out[(static_cast<int64_t>(pair_begin) + pair) * out_rows + out_row] =
                  acc[mi][ni][c];
          }
    }
  }
}

template <class F, class Tile, Epilogue kEpilogue>
void launch_q10_product_tile(const Q10ProductArgs& args, cudaStream_t stream) {
  constexpr size_t kShared = sizeof(Q10Shared<F, Tile>);
  auto kernel = q10_product_kernel<F, Tile, kEpilogue>;
  const int grid = persistent_grid(kernel, Tile::kThreads, kShared);
  kernel<<<grid, Tile::kThreads, kShared, stream>>>(args);
  STRATA_CUDA_CHECK_LAUNCH("q10_product_kernel");
}

// The formats whose staged gate/up measured no faster than their direct reads (H100, qwen35-a3b
// T = 4096, the layer staged / direct, bench/results/2026-12-06.md, calls 57 and 58): IQ4_XS 1.032,
// IQ3_XXS 1.013, IQ2_S 1.012, Q1_0 1.009, IQ2_XXS 0.999, IQ2_XS 0.999. The others that fit gained
// 1.3 … 16 % (TQ2_0 0.839, IQ1_M 0.845, Q3_K 0.848, ..., MXFP4 0.987, Q2_0 0.983).
template <class F>
inline constexpr bool kQ10StagedSlower = std::is_same_v<F, Iq4Xs> || std::is_same_v<F, Iq3Xxs> ||
                                         std::is_same_v<F, Iq2S> || std::is_same_v<F, Q1_0> ||
                                         std::is_same_v<F, Iq2Xxs> || std::is_same_v<F, Iq2Xs>;

// Whether Q10LargeStaged carries format F as gate/up: its shared memory leaves room for two CTAs on
// an SM of 228 KB, and it measured faster. Down keeps Q10Large: its items of few stages (K = f)
// gained nothing (H100, bench/results/2026-12-06.md, call 54: Q2_0 down +0.8 %, IQ3_S gate/up -5 %).
template <class F, Epilogue kEpilogue>
inline constexpr bool kQ10Staged = kEpilogue == Epilogue::kSwigluRequant && !kQ10StagedSlower<F> &&
                                   sizeof(Q10Shared<F, Q10LargeStaged>) <= kQ10StagedSharedBytes;

template <class F, Epilogue kEpilogue>
void launch_q10_product(const Q10ProductArgs& args, Q10TileKind tile, cudaStream_t stream) {
  if (tile == Q10TileKind::kSmall) {
    launch_q10_product_tile<F, Q10Small, kEpilogue>(args, stream);
    return;
  }
  if constexpr (kQ10Staged<F, kEpilogue>) {
    // The staged tile where the device runs as many of its CTAs at once as of Q10Large's (sm_90: two
    // per SM; an A100's 164 KB takes one, Ada's 100 KB none), unless STRATA_Q10_SM80_RAW=direct.
    int device = 0, optin = 0;
    STRATA_CUDA_CHECK(cudaGetDevice(&device));
    STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const int staged = !q10_staged_allowed() || sizeof(Q10Shared<F, Q10LargeStaged>) > static_cast<size_t>(optin)
                           ? 0
                           : persistent_grid(q10_product_kernel<F, Q10LargeStaged, kEpilogue>,
                                             Q10LargeStaged::kThreads, sizeof(Q10Shared<F, Q10LargeStaged>));
    const int large =
        persistent_grid(q10_product_kernel<F, Q10Large, kEpilogue>, Q10Large::kThreads, sizeof(Q10Shared<F, Q10Large>));
    if (staged >= large) {
      launch_q10_product_tile<F, Q10LargeStaged, kEpilogue>(args, stream);
      count_q10_staged_launch();
      return;
    }
  }
  launch_q10_product_tile<F, Q10Large, kEpilogue>(args, stream);
}

}  // namespace strata::cuda::fused_q10

namespace strata::cuda::fused_q10 {

template <class F>
void launch_q10_gate_up(const Q10ProductArgs& args, Q10TileKind tile, cudaStream_t stream) {
  launch_q10_product<F, Epilogue::kSwigluRequant>(args, tile, stream);
}

template <class F>
void launch_q10_down(const Q10ProductArgs& args, Q10TileKind tile, cudaStream_t stream) {
  launch_q10_product<F, Epilogue::kStoreRows>(args, tile, stream);
}

}  // namespace strata::cuda::fused_q10
