// Device code of the q10 Hopper kernels (sm_90a). The host side, the tensor maps, the launch and
// the configurations, is in hopper_q10_launch.cuh.
//
// A persistent grid walks the work items (pair tile of an expert x block of weight columns), from the
// tile offsets built on the device. Warp-specialised, per CTA:
//   - producer (warpgroup 0): two rings of shared slots, each with `full` and `empty` mbarriers.
//     Per weight stage it waits until a raw slot is free, then moves the stage's raw weight blocks
//     of every column: where the weight tensors are 16-byte aligned, TMA boxes (tensor maps built
//     by the launcher: one box per tensor, or one per 16-byte phase of rows that are no whole
//     16-byte units), else one bulk copy per weight row (the 16-byte-aligned span around its
//     blocks);
//     per activation stage (the weight stage or a part of it) it waits until an activation slot is
//     free, then moves the f16 activation codes of every pair of the tile (one bulk copy per pair).
//     The activation scales (one per 64 values), code sums and weight bytes outside the tensor's
//     aligned span go by ordinary loads and stores before the arrival. It also hands each work item
//     to the other warpgroups through a small ring of item slots;
//   - decoder: per chunk of 64 values, decodes the columns' raw blocks into f16 integer core
//     matrices (HalfPiece<F>: the format's wide decode, |w| <= W_f) in a ring of B buffers, with
//     their span scales (and offsets), each buffer announced on its own `full` mbarrier and given
//     back on its `empty` one. Either a warpgroup of its own (warpgroup 1; kDecoderGroup), or two
//     sharing each chunk (warpgroups 1 and 2 of the 64-pair tile, kHopperQ10TwoDecoders), which run
//     up to kBBufs chunks ahead of the consumers, or the consumers themselves, each chunk's decode
//     issued while the previous chunk's products run (HopperQ10DecoderGroup says which);
//   - consumers (the last two warpgroups): per chunk, S/16 wgmma m64n128k16 f32.f16.f16 per span of S
//     values with the activations from registers (ldmatrix at the chunk's start) and the decoded
//     weights from the B buffer, the accumulator restarted on the span's first step: the exact
//     integer span dot.
//     Then each element is folded by fold_span<F>'s operations, acc = fmaf(dot, w_scale * a_scale,
//     acc), in span order.
// Gate/up interleave their rows per feature (column 2i gate, 2i + 1 up of feature i), so a lane
// holds gate and up of the same (pair, feature) and a consumer's 128 columns are one 64-feature
// requantisation block: SwiGLU and the q10 requant (quantize_block_q10's operations, max and sums
// over the 4 lanes of a row by xor-shuffles) stay in registers. Down writes one fp32 row per pair.
// NOTE: no split-K, no reordering of spans: the bits are the q10 CPU arms'.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda/common/async_sm90.cuh"
#include "cuda/common/ptx.cuh"
#include "cuda/fused_hopper/span_copy.hpp"
#include "cuda/fused_q10/hopper_q10_decode.hpp"
#include "formats/iq1_m.hpp"
#include "formats/iq1_s.hpp"
#include "formats/iq2_s.hpp"
#include "formats/nvfp4.hpp"
#include "formats/q2_k.hpp"
#include "formats/q3_k.hpp"
#include "formats/q8_0.hpp"
#include "formats/tq1_0.hpp"
#include "cuda/fused_q10/hopper_q10_products.hpp"
#include "cuda/mma/span_mma.cuh"
#include "cuda/mma/wgmma_f16.cuh"
#include "cuda/pipeline/tile_lookup.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/arith_q10.hpp"

namespace strata::cuda::fused_q10 {

// NOTE: a configuration changes speed, never results: every (pair, weight row) accumulator starts
// at 0.0f and folds the spans of the whole row strictly in order, whatever the tile.
//   Pairs = 64:  the consumers split the columns: each multiplies the tile's 64 pairs by its own 128
//                columns (256 per CTA) from its own B tile;
//   Pairs = 128: the consumers split the pairs: each multiplies its 64 pairs by the CTA's 128
//                columns from one B tile they decode together (half the decode per pair).
//   StageValues / Stages:       the raw weight blocks' ring (whole blocks per stage);
//   ActStageValues / ActStages: the activation codes' ring (a part of a weight stage, so that the
//                               large blocks of the K-quants fit in shared memory beside them).
// The consumers work in chunks of 64 K values (one activation block): a chunk's B tile holds 64/S
// spans, each an exact integer dot of S/16 wgmma k16 steps from a restarted accumulator.
// Whether the tile decodes in a warpgroup of its own: both tiles of every format but those whose
// 128-pair kernel then spills (ptxas -v: IQ1_S, IQ1_M, IQ2_S, NVFP4 and TQ1_0 gate/up, 4 bytes) or
// measured slower with it (H200, bench/results/2026-12-03-batches.md: Q5_0 +7 %, TQ1_0 down +24 %,
// Q4_K down +1 %); elsewhere the consumers decode. On the 64-pair tile (the consumers split 256
// columns) the decoder warpgroup has four tasks per thread and chunk (bench/results/2026-12-06.md).
template <class F, int Ops>
inline constexpr bool kDecoderGroupFormat =
    !std::is_same_v<F, Q5_0> &&
    !(Ops == 2 && (std::is_same_v<F, Iq1S> || std::is_same_v<F, Iq1M> || std::is_same_v<F, Iq2S> ||
                   std::is_same_v<F, Nvfp4> || std::is_same_v<F, Tq1_0>)) &&
    !(Ops == 1 && (std::is_same_v<F, Tq1_0> || std::is_same_v<F, Q4_K>));

// The tiles without a decoder warpgroup whose producer spills at 40 registers beside the TMA loop
// (ptxas -v): TQ1_0 (both roles), Q2_K gate/up. They keep 56 / 224; the others give the consumers 232.
template <class F, int Ops>
inline constexpr bool kHopperQ10WideProducer =
    std::is_same_v<F, Tq1_0> || (Ops == 2 && std::is_same_v<F, Q2_K>);

// The 64-pair tile's producer moves 256 columns at 40 registers beside a decoder warpgroup; the
// formats whose producer needs more (kHopperQ10WideProducer: Q2_K gate/up spills 12 bytes there)
// keep the consumers' decode on that tile.
template <class F, int Ops, int Pairs>
inline constexpr bool HopperQ10DecoderGroup =
    kDecoderGroupFormat<F, Ops> && (Pairs == 128 || !kHopperQ10WideProducer<F, Ops>);

// The formats whose consumers, where they decode, spill when both of a chunk's decode tasks are in
// flight (ptxas -v): TQ1_0 (both roles), IQ1_S, IQ1_M and Q3_K gate/up. They decode one task at a
// time.
template <class F, int Ops>
inline constexpr bool kHopperQ10SerialDecode =
    std::is_same_v<F, Tq1_0> ||
    (Ops == 2 && (std::is_same_v<F, Iq1S> || std::is_same_v<F, Iq1M> || std::is_same_v<F, Q3_K>));

// The 64-pair tile decodes 256 columns a chunk, twice the 128-pair tile's: two decoder warpgroups
// share it (two tasks per thread each, as on the 128-pair tile), where the consumers fit in the
// registers left beside them (formats of 64-value spans: one span-dot set) and the decoders in 56
// (ptxas -v: IQ1_S and IQ1_M down spill 48 and 72 bytes there; they keep one decoder).
template <class F, int Ops, int Pairs>
inline constexpr bool kHopperQ10TwoDecoders = HopperQ10DecoderGroup<F, Ops, Pairs> && Pairs == 64 &&
                                              F::kWideSpan == 64 && !std::is_same_v<F, Iq1S> &&
                                              !std::is_same_v<F, Iq1M>;

template <class F, int Ops, int StageValues, int Stages, int Pairs, int ActStageValues, int ActStages, int BBufs>
struct HopperQ10Tile {
  static constexpr int kOps = Ops;                    // 2: gate + up interleaved; 1: down
  static constexpr int kStageValues = StageValues;    // K values per raw-block stage
  static constexpr int kActStageValues = ActStageValues;  // K values per activation stage
  static constexpr int kChunk = kQ10BlockValues;      // K values per B tile (one activation block)
  static constexpr int kChunksPerStage = StageValues / kChunk;
  static constexpr int kChunksPerActStage = ActStageValues / kChunk;
  static constexpr int kActStagesPerStage = StageValues / ActStageValues;
  static constexpr int kSpan = F::kWideSpan;          // K values per span (one fold)
  static constexpr int kSpansPerChunk = kChunk / kSpan;
  static constexpr int kSteps = kSpan / 16;           // wgmma k16 steps per span
  static constexpr int kChunkSteps = kChunk / 16;     // k16 steps per chunk
  static constexpr bool kOffset = F::kHasOffset;
  static constexpr int kPairs = Pairs;                // routed pairs per CTA tile
  static constexpr bool kPairSplit = Pairs == 128;    // consumers split the pairs, share the columns
  static constexpr int kConsumerPairs = 64;           // pairs per consumer (wgmma M)
  static constexpr int kWgCols = 128;                 // weight columns per consumer (wgmma N)
  static constexpr int kCtaCols = kPairSplit ? kWgCols : 2 * kWgCols;
  static constexpr int kBSets = kPairSplit ? 1 : 2;   // B tiles per buffer: shared, or one per consumer
  static constexpr bool kDecoderGroup = HopperQ10DecoderGroup<F, Ops, Pairs>;
  static constexpr int kDecoderGroups = !kDecoderGroup ? 0 : kHopperQ10TwoDecoders<F, Ops, Pairs> ? 2 : 1;
  static constexpr int kDecodeThreads = kDecoderGroup ? 128 * kDecoderGroups : 256;  // the decoder warpgroups, or the consumers
  static constexpr int kBBufs = BBufs;                // B buffers (chunks) the decoder may run ahead
  static constexpr int kStages = Stages;              // raw-block stages in flight
  static constexpr int kActStages = ActStages;        // activation stages in flight
  // Work items in flight between the producer and the consumers: every item has at least one raw
  // stage and one chunk; the producer runs at most kStages stages ahead of the decoder, and the
  // decoder at most kBBufs chunks ahead of the consumers, so kStages + kBBufs + 2 slots never
  // overlap.
  static constexpr int kItemSlots = Stages + BBufs + 2;
  static constexpr int kAccRegs = kWgCols / 2;        // f32 accumulators per thread and set
  // Columns per span dot: beside a decoder warpgroup the consumers multiply and fold their 128
  // columns in two halves of 64 (m64n64 wgmma), so that the span dot takes 32 registers, not 64.
  static constexpr int kDotCols = kDecoderGroup ? 64 : kWgCols;
  static constexpr int kDotGroups = kWgCols / kDotCols;
  // Span dots in flight together: beside a decoder warpgroup, the chunk's spans of a column group
  // two at a time (formats of 16- and 32-value spans), one commit and one wait for both, in two
  // span-dot sets; elsewhere one span at a time.
  static constexpr int kSpanBatch = kDecoderGroup && kSpansPerChunk > 1 ? 2 : 1;
  // Span scales (and offsets) four to a 16-byte load: the decoders store each at its column's place
  // in hopper_q10_scale_at's order, so that the four columns a fold lane takes of each 16 lie
  // together. Not on the two-decoder 64-pair tiles, whose IQ3_S and TQ2_0 gate/up kernels then
  // spill 4 bytes (ptxas -v): they keep the column order and two 8-byte loads per 16 columns.
  static constexpr bool kScaleQuads = kDecoderGroups != 2;
  // One scale product per column and pair for all of a chunk's spans, where they share their scale
  // (kWideBlockScale: Q4_K) and fold in one batch.
  static constexpr bool kChunkScale = kWideBlockScale<F> && kSpansPerChunk > 1 && kSpanBatch == kSpansPerChunk;
  static constexpr int kThreads = 128 * (1 + kDecoderGroups + 2);  // producer, [decoders,] two consumers
  static constexpr int kFirstConsumer = 1 + kDecoderGroups;      // warpgroup of consumer 0
  // setmaxnreg moves registers between the warpgroups; the total stays what the launch gave. With a
  // decoder warpgroup, measured with -Xptxas -v: the fewest registers with which neither it nor the
  // producer spills, the rest to the consumers. Without one, the consumers that decode keep 232
  // beside a 40-register producer, or 224 beside 56 where the producer spills at 40
  // (kHopperQ10WideProducer).
  static constexpr bool kWideProducer = !kDecoderGroup && kHopperQ10WideProducer<F, Ops>;
  static constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;
  // The 64-pair tile's producer moves 256 columns: it spills at 32 beside a decoder warpgroup.
  static constexpr int kProducerRegisters =
      kDecoderGroup ? (Pairs == 64 ? 40 : 32) : kWideProducer ? 56 : 40;
  // Two span-dot sets (kSpanBatch) take 32 more registers per consumer thread: 184 beside a
  // decoder at 104.
  // Two decoder warpgroups: 640 threads launch with 96 registers each; 56 per decoder thread (two
  // tasks, as the 128-pair tile's decoder at 56 did not spill) leave the consumers 160.
  static constexpr int kDecoderRegisters =
      !kDecoderGroup ? 0 : kDecoderGroups == 2 ? 56 : kSpanBatch == 2 ? 104 : Pairs == 64 ? 120 : 128;
  static constexpr int kConsumerRegisters =
      kDecoderGroups == 2 ? 160 : kDecoderGroup ? (kSpanBatch == 2 ? 184 : 176) : kWideProducer ? 224 : 232;
  static constexpr int kBlocksPerStage = StageValues / F::kBlockValues;
  static constexpr int kRawBytes = kBlocksPerStage * F::kBlockBytes;
  static constexpr int kRawStride = (kRawBytes + 30 + 15) / 16 * 16;
  // Raw stages by TMA (HopperQ10Args::raw_tma): per weight tensor, boxes of kRawStride bytes x
  // kBoxRows rows that land as the slot's kTensorRows rows of that tensor (gate rows, then up
  // rows). A box starts at a 16-byte multiple of its row (TMA takes no other start: a box at the
  // stage's own first byte, 72 bytes into a Q4_0 row, stops on an illegal instruction on the
  // H200), so a stage's bytes sit (row address + stage * kRawBytes) mod 16 into their slot row,
  // as after the per-row copies. Rows that are no whole 16-byte units go in groups of G = 16 /
  // gcd(row bytes, 16) rows (HopperQ10Args::raw_group_shift = log2 G), a 16-byte multiple apart:
  // the map's rows are such groups, and each of a box's G phases (rows p, p + G, ... of the box)
  // is a box of kBoxRows / G group rows at the phase's own x. Possible where a box row fits TMA's
  // 256 bytes; a box has at most 128 rows.
  static constexpr int kTensorRows = kCtaCols / kOps;
  static constexpr int kBoxRows = kTensorRows < 128 ? kTensorRows : 128;
  static constexpr int kBoxesPerTensor = kTensorRows / kBoxRows;
  static constexpr bool kRawTma = kRawStride <= 256;
  // Activation rows of f16 codes: 8 halves of padding keep the 8 rows an ldmatrix reads on
  // disjoint banks.
  static constexpr int kActStrideHalves = ActStageValues + 8;
  static constexpr int kActBlocks = ActStageValues / kQ10BlockValues;  // scales per pair and stage
  static constexpr int kActSums = kOffset ? ActStageValues / kQ10SumValues : 1;  // code sums per pair and stage
  // B tile of one chunk: core matrices of 8 columns x 16 bytes (8 f16 of k); the K-adjacent core
  // matrices of a column group are contiguous (leading offset 128), groups follow each other.
  static constexpr int kCoreLeadingBytes = 128;
  static constexpr int kCoreStrideBytes = 8 * kChunk * 2;
  static constexpr int kBBytes = kWgCols * kChunk * 2;  // one consumer's B tile of one chunk
  static constexpr int kPiecesPerChunk = kChunk / 32;
  static constexpr int kDecodeTasks = kBSets * kWgCols * kPiecesPerChunk / kDecodeThreads;  // pieces per thread, chunk
  // Per item, 16 bits per decode task (hopper_q10_task_rows): one register for two tasks, two for
  // four.
  using TaskRows = std::conditional_t<(kDecodeTasks > 2), uint64_t, uint32_t>;

  static_assert(Ops == 1 || Ops == 2, "down alone, or gate and up");
  static_assert(kSpan == 16 || kSpan == 32 || kSpan == 64, "spans nest in a chunk of 64");
  static_assert(StageValues % F::kBlockValues == 0 && StageValues % kChunk == 0,
                "whole blocks and whole activation blocks per stage");
  static_assert(F::kBlockValues % 32 == 0, "blocks of whole 32-value pieces");
  static_assert(Pairs == 64 || Pairs == 128, "one m64 row tile per consumer");
  static_assert(Ops == 1 || kWgCols == 2 * kQ10BlockValues,
                "a consumer's columns are one 64-feature requant block");
  static_assert(kBSets * kWgCols * kPiecesPerChunk % kDecodeThreads == 0, "decode tasks spread evenly");
  static_assert(kDecodeThreads % kWgCols == 0 || kWgCols % kDecodeThreads == 0, "a task's column from its index");
  static_assert(kPairs <= 128 && kCtaCols % 128 == 0, "one producer thread per pair, whole columns per thread");
  static_assert(kTensorRows % kBoxRows == 0, "a tensor's rows of the slot are whole TMA boxes");
  static_assert(128 * (kProducerRegisters + kDecoderGroups * kDecoderRegisters + 2 * kConsumerRegisters) <=
                    kThreads * kLaunchRegisters,
                "setmaxnreg cannot hand out more registers than the launch gave");
  static_assert(BBufs >= 2, "the decoder runs at least one chunk ahead");
  static_assert(kSpansPerChunk % kSpanBatch == 0, "whole batches of spans per chunk");
  static_assert(Stages >= 2, "a stage decodes while the next stage's blocks land");
  static_assert(ActStageValues % kChunk == 0 && StageValues % ActStageValues == 0,
                "whole activation blocks per activation stage, whole activation stages per raw stage");
  static_assert(ActStages >= 2, "the producer runs at least one activation stage ahead");
};

// The place of CTA-set column `col`'s span scale among the scales of its 16 columns: column
// 8 h + 2 q + e (h, e < 2; q < 4 is the fold lane's index in its quad, which takes columns 2q + e
// and 8 + 2q + e) at 4 q + 2 h + e, with kScaleQuads; else the column itself.
template <class Tile>
__device__ __forceinline__ int hopper_q10_scale_at(int col) {
  if constexpr (Tile::kScaleQuads) {
    const unsigned c = static_cast<unsigned>(col);
    return static_cast<int>((c & ~15u) | ((c & 6u) << 1) | ((c & 8u) >> 2) | (c & 1u));
  } else {
    return col;
  }
}

// Fold lane tig's span scales (or offsets) of columns 16 q + 2 tig + e and 16 q + 8 + 2 tig + e
// (e < 2) among a span's `row` of scales, in that order: one 16-byte load with kScaleQuads (the
// decoders' hopper_q10_scale_at order), else two 8-byte loads.
template <class Tile>
__device__ __forceinline__ float4 hopper_q10_lane_scales(const float* row, int q, int tig) {
  if constexpr (Tile::kScaleQuads) {
    return *reinterpret_cast<const float4*>(row + 16 * q + 4 * tig);
  } else {
    const float2 lo = *reinterpret_cast<const float2*>(row + 16 * q + 2 * tig);
    const float2 hi = *reinterpret_cast<const float2*>(row + 16 * q + 8 + 2 * tig);
    return make_float4(lo.x, lo.y, hi.x, hi.y);
  }
}

struct HopperQ10Item {
  int expert;
  int32_t pair_begin;
  int pair_count;
  int col_begin;  // in interleaved columns (2 per feature for gate/up)
};

// The CTA's items in order; the producer, the decoders and the consumers walk the same sequence.
// An item is one column block of one pair tile. They come in units of up to `group` consecutive
// column blocks of one pair tile: unit u = blockIdx.x + j * gridDim.x is unit u % units_per_tile
// of tile u / units_per_tile. Where a row's activation stages all fit in the ring at once
// (hopper_q10_act_group), the items of a unit share one copy of them: the producer moves them for
// the unit's first item and the consumers release them after its last, so that a tile's codes
// reach the CTA once per unit, not once per column block. With a group of 1 every item is its own
// unit, in the order of item index tile * col_blocks + column block.
struct HopperQ10Walk {
  int tile, n_tiles;                 // the tile offsets are int32
  int col_blocks, group, units_per_tile;
  int step_tiles, step_units;        // gridDim.x units on: whole tiles, and units within a tile
  int unit_in_tile;                  // the unit's place among its tile's units
  int col;                           // the item's column block
  // Divisions only here: the units then step by gridDim.x with a carry, their items by one.
  __device__ __forceinline__ HopperQ10Walk(int tiles, int blocks, int unit_blocks)
      : n_tiles(tiles), col_blocks(blocks), group(unit_blocks) {
    units_per_tile = (col_blocks + group - 1) / group;
    step_tiles = static_cast<int>(gridDim.x) / units_per_tile;
    step_units = static_cast<int>(gridDim.x) % units_per_tile;
    tile = static_cast<int>(blockIdx.x) / units_per_tile;
    unit_in_tile = static_cast<int>(blockIdx.x) % units_per_tile;
    col = unit_in_tile * group;
  }
  __device__ __forceinline__ bool valid() const { return tile < n_tiles; }
  __device__ __forceinline__ bool first() const { return col == unit_in_tile * group; }  // moves the unit's codes
  __device__ __forceinline__ bool last() const {  // releases them
    return col + 1 == min(unit_in_tile * group + group, col_blocks);
  }
  __device__ __forceinline__ void next() {
    if (last()) {
      tile += step_tiles;
      unit_in_tile += step_units;
      if (unit_in_tile >= units_per_tile) {
        unit_in_tile -= units_per_tile;
        ++tile;
      }
      col = unit_in_tile * group;
    } else {
      ++col;
    }
  }
};

template <class Tile>
struct HopperQ10RawSlot {
  alignas(16) uint8_t raw[Tile::kCtaCols][Tile::kRawStride];  // raw blocks, aligned spans
};

// The raw slot row of CTA column n: the rows of each tensor together, as the TMA boxes land them
// (gate/up columns interleave their rows, 2i gate, 2i + 1 up), and within each box of kBoxRows
// rows those of one 16-byte phase together (rows p, p + G, ... with G = 1 << group_shift, as the
// box of phase p lands them); the per-row copies (group_shift 0) put them where the boxes would.
template <class Tile>
__device__ __forceinline__ int hopper_q10_slot_row(int n, int group_shift) {
  const int op = Tile::kOps == 2 ? n % 2 : 0;
  const int r = Tile::kOps == 2 ? n / 2 : n;  // row within the tensor's rows of the CTA
  const int in_box = r % Tile::kBoxRows;
  const int phase = in_box & ((1 << group_shift) - 1);
  return op * Tile::kTensorRows + (r - in_box) + phase * (Tile::kBoxRows >> group_shift) +
         (in_box >> group_shift);
}

template <class Tile>
struct HopperQ10ActSlot {
  alignas(16) __half acts[Tile::kPairs][Tile::kActStrideHalves];    // [pair][k] f16 codes
  alignas(16) float act_scale[Tile::kPairs][Tile::kActBlocks];      // [pair][64-value block]
  alignas(16) int32_t act_sum[Tile::kPairs][Tile::kActSums];        // [pair][16-value sum] (offsets)
};

template <class F, class Tile>
struct HopperQ10Shared {
  uint64_t raw_full[Tile::kStages];      // producer -> consumers: the raw slot's bytes have landed
  uint64_t raw_empty[Tile::kStages];     // decoder -> producer: the raw slot has been decoded
  uint64_t act_full[Tile::kActStages];   // the same for the activation slots
  uint64_t act_empty[Tile::kActStages];
  // producer -> consumers: the work items in flight, written before the arrival on the raw_full
  // barrier of the item's first stage (see hopper_q10_producer)
  HopperQ10Item items[Tile::kItemSlots];
  alignas(16) uint32_t table[HalfPiece<F>::kTableWords];
  uint64_t b_full[Tile::kBBufs];         // decoder -> consumers: the B buffer holds its chunk
  uint64_t b_empty[Tile::kBBufs];        // consumers -> decoder: the B buffer has been read
  alignas(128) uint8_t b[Tile::kBBufs][Tile::kBSets][Tile::kBBytes];  // [buffer][set] core matrices, f16
  // [buffer][set][span of the chunk][column] span scale (and offset)
  alignas(16) float b_scale[Tile::kBBufs][Tile::kBSets][Tile::kSpansPerChunk][Tile::kWgCols];
  alignas(16) float b_offset[Tile::kOffset ? Tile::kBBufs : 1][Tile::kBSets][Tile::kOffset ? Tile::kSpansPerChunk : 1]
                            [Tile::kOffset ? Tile::kWgCols : 1];
  alignas(128) HopperQ10RawSlot<Tile> raw_slot[Tile::kStages];
  alignas(128) HopperQ10ActSlot<Tile> act_slot[Tile::kActStages];
};

template <class F, class Tile>
constexpr size_t hopper_q10_shared_bytes() {
  return sizeof(HopperQ10Shared<F, Tile>);
}

template <class Tile>
__device__ __forceinline__ HopperQ10Item hopper_q10_item(const Q10ProductArgs& args, const HopperQ10Walk& walk) {
  HopperQ10Item w;
  const int32_t tile = walk.tile;
  w.col_begin = walk.col * Tile::kCtaCols;
  w.expert = expert_of_tile(args.tile_offsets, args.n_expert + 1, tile);
  w.pair_begin = args.expert_offsets[w.expert] + (tile - args.tile_offsets[w.expert]) * Tile::kPairs;
  w.pair_count = min(Tile::kPairs, args.expert_offsets[w.expert + 1] - w.pair_begin);
  return w;
}

// The weight row behind CTA column n of an item, or null past the tensor's rows.
template <class Tile>
__device__ __forceinline__ const uint8_t* hopper_q10_row(const Q10ProductArgs& args, const HopperQ10Item& w,
                                                         int n, int& op) {
  op = Tile::kOps == 2 ? n % 2 : 0;
  const int row = (w.col_begin + n) / Tile::kOps;
  if (row >= args.out_rows) return nullptr;
  return args.weights[op] + static_cast<size_t>(w.expert) * args.expert_stride_bytes[op] +
         static_cast<size_t>(row) * args.row_bytes;
}

// ---- producer ------------------------------------------------------------------------------------
// Thread pt (0..127) moves CTA columns pt (and pt + 128) and pair pt of the tile. Per weight stage:
// its raw blocks, then its activation stages, the order in which the consumers need them (the
// last chunk of a stage decodes the next stage's first one).
// kTma: the raw stages as TMA boxes (HopperQ10Tile::kRawTma, HopperQ10Args::raw_tma), a loop of its
// own so that the per-row copies' registers are not live beside it.
template <class F, class Tile, bool kTma>
__device__ __forceinline__ void hopper_q10_producer(const HopperQ10Args& a, HopperQ10Shared<F, Tile>& sm, int pt,
                                                    int n_tiles, int col_blocks, int group, int n_chunks) {
  const Q10ProductArgs& args = a.p;
  uint32_t raw_use = 0, act_use = 0;  // slots filled so far by this CTA
  uint32_t item_use = 0;               // items handed to the consumers so far
  const int act_blocks_per_row = args.in_features / kQ10BlockValues;
  const int n_stages = (n_chunks + Tile::kChunksPerStage - 1) / Tile::kChunksPerStage;
  for (HopperQ10Walk walk(n_tiles, col_blocks, group); walk.valid(); walk.next(), ++item_use) {
    const HopperQ10Item w = hopper_q10_item<Tile>(args, walk);
    const bool move_acts = walk.first();  // else the unit's codes are in the ring already
    const bool has_pair = pt < w.pair_count;
    const int64_t act_row =
        !has_pair ? 0 : (args.pair_token != nullptr ? args.pair_token[w.pair_begin + pt] : w.pair_begin + pt);
    for (int stage = 0; stage < n_stages; ++stage) {
      // The last stage of a row holds the chunks left (K no multiple of the stage); a TMA box of
      // it reads the next row's bytes or zeros past the map's row, which no chunk decodes.
      const int stage_chunks = min(Tile::kChunksPerStage, n_chunks - stage * Tile::kChunksPerStage);
      {  // the stage's raw blocks
        const int s = static_cast<int>(raw_use % Tile::kStages);
        if (raw_use >= Tile::kStages) mbarrier_wait(&sm.raw_empty[s], ((raw_use / Tile::kStages) - 1) & 1u);
        // The item, for the consumers: released by this thread's arrival below, read by them
        // after their wait on this stage.
        if (stage == 0 && pt == 0) sm.items[item_use % Tile::kItemSlots] = w;
        HopperQ10RawSlot<Tile>& slot = sm.raw_slot[s];
        if constexpr (kTma) {  // G boxes per tensor and box rows, by thread 0; the others arrive
          if (pt == 0) {
            mbarrier_arrive_expect_tx(&sm.raw_full[s], sizeof(HopperQ10RawSlot<Tile>));
            const int shift = a.raw_group_shift, phase_rows = Tile::kBoxRows >> shift;
#pragma unroll
            for (int op = 0; op < Tile::kOps; ++op)
#pragma unroll
              for (int b = 0; b < Tile::kBoxesPerTensor; ++b) {
                const int first_row = w.col_begin / Tile::kOps + b * Tile::kBoxRows;  // a multiple of G
#pragma unroll 1
                for (int phase = 0; phase < (1 << shift); ++phase)
                  tma_load_3d(slot.raw[op * Tile::kTensorRows + b * Tile::kBoxRows + phase * phase_rows],
                              &a.raw_map[op],
                              static_cast<int>((phase * args.row_bytes + stage * Tile::kRawBytes) & ~size_t{15}),
                              first_row >> shift, w.expert, &sm.raw_full[s]);
              }
          } else {
            mbarrier_arrive(&sm.raw_full[s]);
          }
        } else {
          // Pass 1: ordinary stores (bytes outside the aligned span) and this thread's bulk byte
          // count; pass 2, after the arrival that announces the bytes: the bulk copies.
          uint32_t bytes = 0;
          for (int pass = 0; pass < 2; ++pass) {
#pragma unroll
            for (int i = 0; i < Tile::kCtaCols / 128; ++i) {
              const int n = pt + 128 * i;
              int op = 0;
              const uint8_t* row = hopper_q10_row<Tile>(args, w, n, op);
              if (row == nullptr) continue;
              const uint8_t* src = row + static_cast<size_t>(stage) * Tile::kRawBytes;
              uint32_t offset = 0;
              uint8_t* dst = slot.raw[hopper_q10_slot_row<Tile>(n, 0)];
              const int stage_bytes =
                  stage_chunks * Tile::kChunk / F::kBlockValues * F::kBlockBytes;
              const uint32_t size = fused_hopper::span_copy_plan(
                  dst, src, stage_bytes, args.weights[op], a.weights_end[op], pass == 0, offset);
              if (pass == 0) bytes += size;
              else if (size > 0)
                bulk_copy_g2s(dst + offset, src - (reinterpret_cast<uintptr_t>(src) & 15u) + offset, size,
                              &sm.raw_full[s]);
            }
            if (pass == 0) mbarrier_arrive_expect_tx(&sm.raw_full[s], bytes);  // releases this thread's stores
          }
        }
        ++raw_use;
      }
      for (int part = 0; move_acts && part < Tile::kActStagesPerStage; ++part, ++act_use) {  // its activation stages
        const int act_chunks =
            min(Tile::kChunksPerActStage, stage_chunks - part * Tile::kChunksPerActStage);
        if (act_chunks <= 0) break;  // past K in the row's last stage
        const int s = static_cast<int>(act_use % Tile::kActStages);
        if (act_use >= Tile::kActStages) mbarrier_wait(&sm.act_empty[s], ((act_use / Tile::kActStages) - 1) & 1u);
        HopperQ10ActSlot<Tile>& slot = sm.act_slot[s];
        const int act_stage = stage * Tile::kActStagesPerStage + part;  // within the row
        uint32_t bytes = 0;
        if (has_pair) {  // scales (and sums): ordinary stores, released by the arrival below
          const float* src = args.act_scales + act_row * act_blocks_per_row + act_stage * Tile::kActBlocks;
#pragma unroll
          for (int q = 0; q < Tile::kActBlocks; ++q)
            if (q < act_chunks) slot.act_scale[pt][q] = src[q];
          if constexpr (Tile::kOffset) {
            // K % 64 == 0: a row's sums start 16-byte aligned, and so do a stage's.
            const int4* sums = reinterpret_cast<const int4*>(args.act_sums + act_row * (args.in_features / kQ10SumValues) +
                                                             act_stage * Tile::kActSums);
            static_assert(Tile::kActSums / 4 == Tile::kActBlocks, "four sums per activation block");
#pragma unroll
            for (int q = 0; q < Tile::kActSums / 4; ++q)
              if (q < act_chunks) reinterpret_cast<int4*>(slot.act_sum[pt])[q] = sums[q];
          }
          bytes = act_chunks * Tile::kChunk * sizeof(__half);
        }
        mbarrier_arrive_expect_tx(&sm.act_full[s], bytes);
        if (has_pair)
          bulk_copy_g2s(slot.acts[pt],
                        args.act_codes + act_row * args.in_features + static_cast<int64_t>(act_stage) * Tile::kActStageValues,
                        bytes, &sm.act_full[s]);
      }
    }
  }
}

// ---- decoder ------------------------------------------------------------------------------------
// A decode task is one 32-value piece of one column of one B set; thread t of the decoding threads
// has tasks t + kDecodeThreads * i, i < kDecodeTasks, the same columns in every chunk of an item.
// The raw rows lie a multiple of 16 bytes apart (bulk copies), so the lanes that read the bytes at
// one offset of 16 rows meet two to a bank; the lane mappings keep the two half-warps' loads apart:
//   - decoder warpgroups: within a set, task r = 32 w + l (l: the lane) is column 16 w + l % 16,
//     piece l / 16. The two half-warps decode the two pieces of the same 16 columns: the bytes both
//     pieces read (a block's d, its qh and scale bytes) load as broadcasts, the others lie at
//     another offset of the same rows;
//   - consumers that decode: task index = (set * kPiecesPerChunk + piece) * kWgCols + column
//     within the set, the upper half of each warp taking the chunk's pieces in the other order
//     (ptxas -v: the decoder warpgroups' mapping spills TQ1_0's 64-pair consumers, 756 bytes).
template <class Tile>
struct HopperQ10Task {
  static_assert(Tile::kPiecesPerChunk == 2 && Tile::kWgCols % 16 == 0 && Tile::kDecodeThreads % 32 == 0,
                "two 32-value pieces per chunk, one per half-warp");
  int set, local, piece;
  __device__ __forceinline__ HopperQ10Task(int t, int i) {
    // From an unsigned task index: the compiler then knows the fields are not negative, and the
    // quotients and remainders of the decode's addresses need no sign fix-up.
    const unsigned task =
        static_cast<unsigned>(t) + Tile::kDecodeThreads * static_cast<unsigned>(i);
    const unsigned half = (task % 32u) / 16u;  // the lane's half-warp (kDecodeThreads is whole warps)
    constexpr unsigned kSetTasks = Tile::kWgCols * Tile::kPiecesPerChunk;
    set = static_cast<int>(task / kSetTasks);
    if constexpr (Tile::kDecoderGroup) {
      const unsigned r = task % kSetTasks;
      local = static_cast<int>((r / 32u) * 16u + r % 16u);
      piece = static_cast<int>(half);
    } else {
      local = static_cast<int>(task % Tile::kWgCols);
      // The tasks of one (set, column) belong to threads t mod 128 equal, so of one lane: flipping
      // the piece by the lane's half-warp is a permutation of them.
      piece = static_cast<int>(((task / Tile::kWgCols) % Tile::kPiecesPerChunk) ^ half);
    }
  }
  __device__ __forceinline__ int column() const { return set * Tile::kWgCols + local; }  // CTA column
};

// Per item, bits [16 i, 16 i + 12) for task i: the low four address bits of the task's weight row
// (where its bytes sit in a raw slot, from which each stage's follow; 0 past the tensor's rows),
// then its raw slot row (hopper_q10_slot_row): one register beside the consumers' accumulators
// (two tasks each), two in the 64-pair tile's decoder warpgroup (four tasks each).
template <class Tile>
using HopperQ10TaskRows = typename Tile::TaskRows;

template <class Tile>
__device__ __forceinline__ HopperQ10TaskRows<Tile> hopper_q10_task_rows(const HopperQ10Args& a,
                                                                        const HopperQ10Item& w,
                                                                        int t) {
  static_assert(16 * Tile::kDecodeTasks <= 8 * sizeof(HopperQ10TaskRows<Tile>) &&
                    Tile::kCtaCols <= 256,
                "16 bits per task");
  HopperQ10TaskRows<Tile> rows = 0;
#pragma unroll
  for (int i = 0; i < Tile::kDecodeTasks; ++i) {
    const HopperQ10Task<Tile> task(t, i);
    int op = 0;
    const uint8_t* row = hopper_q10_row<Tile>(a.p, w, task.column(), op);
    const auto low = row == nullptr ? 0u : static_cast<uint32_t>(reinterpret_cast<uintptr_t>(row) & 15u);
    const auto slot = static_cast<uint32_t>(hopper_q10_slot_row<Tile>(task.column(), a.raw_group_shift));
    rows |= static_cast<HopperQ10TaskRows<Tile>>(low | slot << 4) << (16 * i);
  }
  return rows;
}

// Decodes thread t's tasks of chunk `cis` of the raw stage in `slot` into B buffer `buf`.
template <class F, class Tile>
__device__ __forceinline__ void hopper_q10_decode_chunk(HopperQ10Shared<F, Tile>& sm,
                                                        const HopperQ10RawSlot<Tile>& slot,
                                                        HopperQ10TaskRows<Tile> rows, int t,
                                                        int stage, int cis, int buf) {
  using Piece = HalfPiece<F>;
  constexpr int kPieceSpans = fused_q10::kPieceSpans<F>;
  // A task's piece into registers: its f16 pairs and span scales.
  auto decode_task = [&](int i, uint32_t (&h2)[16], WideScale (&scale)[kPieceSpans]) {
    const HopperQ10Task<Tile> task(t, i);
    // The piece's first value within the stage.
    const unsigned value = static_cast<unsigned>(cis * Tile::kChunk + 32 * task.piece);
    const auto row_low = static_cast<uint32_t>(rows >> (16 * i)) & 15u;
    // The stage's bytes start (row_low + stage * kRawBytes) mod 16 into the slot row
    // (span_copy_plan, or a TMA box from the 16-byte unit of the stage's first byte).
    // NOTE: a column past the tensor's rows decodes whatever its slot row holds (zeros from the
    // kernel's start or from a TMA box's out-of-bounds fill, or the bytes of a row of an earlier
    // item): wgmma's column n of D reads only column n of B, and the epilogues store no output
    // of such a column (gate/up: whole 64-feature blocks, f % 64 == 0; down: row < out_rows).
    const uint8_t* blocks =
        slot.raw[static_cast<uint32_t>(rows >> (16 * i + 4)) & 0xFFu] +
        ((row_low + stage * Tile::kRawBytes) & 15u);
    Piece::decode(blocks + (value / F::kBlockValues) * F::kBlockBytes, (value % F::kBlockValues) / 32, sm.table, h2,
                  scale);
  };
  // A task's column within its 16 is t % 16 in both task mappings (HopperQ10Task), so the place of
  // its span scales, hopper_q10_scale_at(local), is local plus a constant of the thread.
  const int scale_shift = hopper_q10_scale_at<Tile>(t % 16) - t % 16;
  // The piece into its core matrices of B buffer `buf`, its span scales (and offsets) beside them.
  auto store_task = [&](int i, const uint32_t (&h2)[16], const WideScale (&scale)[kPieceSpans]) {
    const HopperQ10Task<Tile> task(t, i);
    uint8_t* core = sm.b[buf][task.set] + (task.local / 8) * Tile::kCoreStrideBytes +
                    (4 * task.piece) * Tile::kCoreLeadingBytes + (task.local % 8) * 16;
#pragma unroll
    for (int q = 0; q < 4; ++q)
      *reinterpret_cast<uint4*>(core + q * Tile::kCoreLeadingBytes) =
          make_uint4(h2[4 * q], h2[4 * q + 1], h2[4 * q + 2], h2[4 * q + 3]);
    if ((32 * task.piece) % Tile::kSpan == 0) {  // the piece starts kPieceSpans spans of the chunk
#pragma unroll
      for (int j = 0; j < kPieceSpans; ++j) {
        const int span = (32 * task.piece) / Tile::kSpan + j;
        const int at = task.local + scale_shift;  // hopper_q10_scale_at<Tile>(task.local)
        sm.b_scale[buf][task.set][span][at] = scale[j].scale;
        if constexpr (Tile::kOffset) sm.b_offset[buf][task.set][span][at] = scale[j].offset;
      }
    }
  };
  // In the decoder warpgroup, every task's decode before any of their stores: the compiler keeps a
  // shared load after a shared store that may alias it, so a store between two tasks would chain
  // their latencies. Consumers that decode store each task's piece before the next task's decode
  // (both tasks at once spill beside their accumulators: ptxas -v), and the formats that spill
  // even so (kHopperQ10SerialDecode) keep the loop rolled.
  if constexpr (Tile::kDecoderGroup) {
    // Two tasks in registers at a time: four (the 64-pair tile) spill at the decoder's registers.
    constexpr int kBatch = Tile::kDecodeTasks < 2 ? Tile::kDecodeTasks : 2;
#pragma unroll
    for (int i0 = 0; i0 < Tile::kDecodeTasks; i0 += kBatch) {
      uint32_t h2[kBatch][16];
      WideScale scale[kBatch][kPieceSpans];
#pragma unroll
      for (int i = 0; i < kBatch; ++i) decode_task(i0 + i, h2[i], scale[i]);
#pragma unroll
      for (int i = 0; i < kBatch; ++i) store_task(i0 + i, h2[i], scale[i]);
    }
  } else {
    auto decode_and_store = [&](int i) {
      uint32_t h2[16];
      WideScale scale[kPieceSpans];
      decode_task(i, h2, scale);
      store_task(i, h2, scale);
    };
    if constexpr (!kHopperQ10SerialDecode<F, Tile::kOps>) {
#pragma unroll
      for (int i = 0; i < Tile::kDecodeTasks; ++i) decode_and_store(i);
    } else {
#pragma unroll 1
      for (int i = 0; i < Tile::kDecodeTasks; ++i) decode_and_store(i);
    }
  }
}

// One chunk u of an item's n_chunks (its raw stages start at raw_use; the chunk's B buffer use is
// b_at): waits for the raw stage (its first chunk; the item's first stage was waited for already)
// and for the B buffer, decodes thread t's tasks, gives the raw stage back after its last chunk (or
// the row's), and announces the buffer.
template <class F, class Tile>
__device__ __forceinline__ void hopper_q10_decode_step(HopperQ10Shared<F, Tile>& sm,
                                                       HopperQ10TaskRows<Tile> rows,
                                                       int t, uint32_t raw_use, uint32_t b_at,
                                                       int u, int n_chunks) {
  const int stage = static_cast<int>(static_cast<unsigned>(u) / Tile::kChunksPerStage);
  const int cis = static_cast<int>(static_cast<unsigned>(u) % Tile::kChunksPerStage);
  const uint32_t raw_at = raw_use + stage;
  const uint32_t raw_index = raw_at % Tile::kStages;
  if (cis == 0 && u > 0) mbarrier_wait(&sm.raw_full[raw_index], (raw_at / Tile::kStages) & 1u);
  const int buf = static_cast<int>(b_at % Tile::kBBufs);
  if (b_at >= Tile::kBBufs) mbarrier_wait(&sm.b_empty[buf], ((b_at / Tile::kBBufs) - 1) & 1u);
  hopper_q10_decode_chunk<F, Tile>(sm, sm.raw_slot[raw_index], rows, t, stage, cis, buf);
  if (cis == Tile::kChunksPerStage - 1 || u == n_chunks - 1)
    mbarrier_arrive(&sm.raw_empty[raw_index]);  // stage decoded
  fence_proxy_async_shared();  // the generic stores above, before the tensor cores read them
  mbarrier_arrive(&sm.b_full[buf]);
}

// The item (from the producer) and the decode tasks' rows (hopper_q10_task_rows), once the item's
// first raw stage has landed.
template <class F, class Tile>
__device__ __forceinline__ HopperQ10Item hopper_q10_decode_item(const HopperQ10Args& a,
                                                                HopperQ10Shared<F, Tile>& sm, int t, uint32_t raw_use,
                                                                uint32_t item_use,
                                                                HopperQ10TaskRows<Tile>& rows) {
  mbarrier_wait(&sm.raw_full[raw_use % Tile::kStages], (raw_use / Tile::kStages) & 1u);
  const HopperQ10Item w = sm.items[item_use % Tile::kItemSlots];
  rows = hopper_q10_task_rows<Tile>(a, w, t);
  return w;
}

// The decoder warpgroup: every chunk of every item of this CTA into the ring of B buffers.
template <class F, class Tile>
__device__ __forceinline__ void hopper_q10_decoder(const HopperQ10Args& a, HopperQ10Shared<F, Tile>& sm, int t,
                                                   int n_tiles, int col_blocks, int group, int n_chunks,
                                                   int n_stages) {
  uint32_t raw_use = 0, item_use = 0, b_use = 0;  // raw stages, items and B buffers used so far
  for (HopperQ10Walk walk(n_tiles, col_blocks, group); walk.valid(); walk.next(), ++item_use) {
    HopperQ10TaskRows<Tile> rows = 0;
    hopper_q10_decode_item<F, Tile>(a, sm, t, raw_use, item_use, rows);
#pragma unroll 1
    for (int u = 0; u < n_chunks; ++u)
      hopper_q10_decode_step<F, Tile>(sm, rows, t, raw_use, b_use + u, u, n_chunks);
    raw_use += n_stages;
    b_use += n_chunks;
  }
}

// The first of the 16 pairs (m16 rows) that warp `warp` of consumer `c` multiplies, folds and
// stores; a warp whose 16 rows are all past the tile's pairs skips its fold. On the 64-pair tile
// (both consumers on the same pairs) consumer 1 takes its four row blocks rotated by two: a tile's
// pairs fill its first rows, so with at most 32 (most tiles at a mean of 16 pairs per expert) the
// consumers' live warps sit on different schedulers (warp w of a warpgroup runs on scheduler w),
// where unrotated both would fold on the same ones. On the 128-pair tile the rotation, measured
// with the epilogue skip below, was 1-2 % slower (bench/results/2026-12-06.md, call 41): its rows
// stay in order. On both tiles each 8-row half of a warp whose rows are all padding skips gate/up's
// SwiGLU and requantisation (per warp on the 128-pair tile: the layer 0.98x its time at T = 4096,
// call 51; per half: 0.975x at T = 512, call 52).
template <class Tile>
__device__ __forceinline__ int hopper_q10_warp_pair(int pair_base, int warp, int c) {
  if constexpr (Tile::kPairSplit) return pair_base + 16 * warp;
  else return pair_base + (16 * warp + 32 * c) % Tile::kConsumerPairs;
}

template <class F, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, 1) hopper_q10_kernel(const __grid_constant__ HopperQ10Args a) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(WideBlockFormat<F>, "the q10 kernels read the format's wide decode");
  using Span = mma::SpanMma<F>;  // NOTE: refuses formats whose span could reach 2^24
  static_assert(Span::kSteps == Tile::kSteps, "one wgmma k16 step per 16 values of the span");
  extern __shared__ __align__(128) uint8_t shared_raw[];
  HopperQ10Shared<F, Tile>& sm = *reinterpret_cast<HopperQ10Shared<F, Tile>*>(shared_raw);
  const Q10ProductArgs& args = a.p;

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  // K % 64 == 0 (the launcher checks); the row's last raw and activation stages may hold fewer
  // chunks than the others.
  const int n_chunks = args.in_features / Tile::kChunk;
  const int n_stages = (n_chunks + Tile::kChunksPerStage - 1) / Tile::kChunksPerStage;
  const int n_act_stages = (n_chunks + Tile::kChunksPerActStage - 1) / Tile::kChunksPerActStage;
  const int col_blocks = (Tile::kOps * args.out_rows + Tile::kCtaCols - 1) / Tile::kCtaCols;
  const int n_tiles = args.tile_offsets[args.n_expert];
  // Column blocks per unit (HopperQ10Walk): the launcher's group where the ring holds every
  // activation stage of a row, else 1 (each item moves and releases its own).
  const int unit_blocks = n_act_stages <= Tile::kActStages ? max(1, a.act_group) : 1;

  for (int i = tid; i < HalfPiece<F>::kTableWords; i += Tile::kThreads) sm.table[i] = HalfPiece<F>::table_word(i);
  // The raw slots start as zeros, so that a slot row no stage has filled (columns past the tensor's
  // rows) holds defined bytes; the async proxy's writes to them come after the fence.
  static_assert(sizeof(sm.raw_slot) % sizeof(uint4) == 0, "raw slots of whole 16-byte units");
  for (int i = tid; i < static_cast<int>(sizeof(sm.raw_slot) / sizeof(uint4)); i += Tile::kThreads)
    reinterpret_cast<uint4*>(sm.raw_slot)[i] = make_uint4(0u, 0u, 0u, 0u);
  fence_proxy_async_shared();
  init_stage_ring(sm.raw_full, sm.raw_empty, 128, Tile::kDecodeThreads);  // producer -> decoder(s)
  init_stage_ring(sm.act_full, sm.act_empty, 128, 256);                   // producer -> two consumers
  init_stage_ring(sm.b_full, sm.b_empty, Tile::kDecodeThreads, 256);      // decoder(s) -> two consumers
  __syncthreads();

  if (warpgroup == 0) {
    setmaxnreg_decrease<Tile::kProducerRegisters>();
    if (Tile::kRawTma && a.raw_tma != 0)
      hopper_q10_producer<F, Tile, Tile::kRawTma>(a, sm, tid, n_tiles, col_blocks, unit_blocks, n_chunks);
    else
      hopper_q10_producer<F, Tile, false>(a, sm, tid, n_tiles, col_blocks, unit_blocks, n_chunks);
    return;
  }
  if constexpr (Tile::kDecoderGroup) {
    if (warpgroup <= Tile::kDecoderGroups) {
      setmaxnreg_decrease<Tile::kDecoderRegisters>();
      hopper_q10_decoder<F, Tile>(a, sm, tid - 128, n_tiles, col_blocks, unit_blocks, n_chunks, n_stages);
      return;
    }
  }

  // ---- consumers -------------------------------------------------------------------------------
  setmaxnreg_increase<Tile::kConsumerRegisters>();
  // The consumer index, broadcast from lane 0: the compiler then knows it is warp-uniform, and
  // keeps what follows from it (the 64-pair tile's B set, its address and the wgmma descriptors
  // built from that) in uniform registers instead of computing them in every lane and moving
  // them to uniform registers before each wgmma.
  const int c = __shfl_sync(0xffffffffu, warpgroup - Tile::kFirstConsumer, 0);
  const int t = tid - 128 * warpgroup;  // thread within the consumer warpgroup
  const int warp = __shfl_sync(0xffffffffu, t / 32, 0), lane = t % 32;  // warp: uniform, as c
  const int group = lane / 4, tig = lane % 4;
  // Pair split: pairs [64c, 64c + 64) against the shared columns; column split: the tile's pairs
  // against columns [c * kWgCols, (c + 1) * kWgCols).
  const int set = Tile::kPairSplit ? 0 : c;
  const int pair_base = Tile::kPairSplit ? Tile::kConsumerPairs * c : 0;
  const int warp_pair = hopper_q10_warp_pair<Tile>(pair_base, warp, c);  // the first of the warp's 16 pairs
  const int col_base = set * Tile::kWgCols;
  uint32_t act_use = 0, item_use = 0, b_use = 0;  // slots consumed by the items before this one
  [[maybe_unused]] uint32_t raw_use = 0;          // the raw stages decoded, when the consumers decode
  [[maybe_unused]] const int decoder = tid - 128;  // this thread among the decoding consumers

  float span_dot[Tile::kSpanBatch][Tile::kDotCols / 2];
#pragma unroll
  for (int b = 0; b < Tile::kSpanBatch; ++b)
#pragma unroll
    for (int r = 0; r < Tile::kDotCols / 2; ++r) span_dot[b][r] = 0.0f;

  for (HopperQ10Walk walk(n_tiles, col_blocks, unit_blocks); walk.valid(); walk.next(), ++item_use) {
    const bool release_acts = walk.last();  // the unit's last item gives its activation stages back
    float acc[Tile::kAccRegs];
#pragma unroll
    for (int r = 0; r < Tile::kAccRegs; ++r) acc[r] = 0.0f;

    // The item: from the producer, behind the decoder's announcement of its first chunk; or, when the
    // consumers decode, once its first raw stage has landed, with its first chunk decoded here.
    HopperQ10Item w;
    [[maybe_unused]] HopperQ10TaskRows<Tile> rows = 0;
    if constexpr (!Tile::kDecoderGroup) {
      w = hopper_q10_decode_item<F, Tile>(a, sm, decoder, raw_use, item_use, rows);
      hopper_q10_decode_step<F, Tile>(sm, rows, decoder, raw_use, b_use, 0, n_chunks);
    }
    mbarrier_wait(&sm.b_full[b_use % Tile::kBBufs], (b_use / Tile::kBBufs) & 1u);
    if constexpr (Tile::kDecoderGroup) w = sm.items[item_use % Tile::kItemSlots];

    // The A fragments (activation codes) of chunk u: waits for its activation stage, then ldmatrix.
    uint32_t a_frag[Tile::kChunkSteps][4];
    auto load_a = [&](int u) {
      const uint32_t act_at = act_use + u / Tile::kChunksPerActStage;
      const uint32_t act_index = act_at % Tile::kActStages;
      const int act_cis = u % Tile::kChunksPerActStage;
      if (act_cis == 0) mbarrier_wait(&sm.act_full[act_index], (act_at / Tile::kActStages) & 1u);
#pragma unroll
      for (int step = 0; step < Tile::kChunkSteps; ++step)
        ldmatrix_x4(a_frag[step][0], a_frag[step][1], a_frag[step][2], a_frag[step][3],
                    &sm.act_slot[act_index].acts[warp_pair + lane % 16]
                                                [act_cis * Tile::kChunk + 16 * step + 8 * (lane / 16)]);
    };
#pragma unroll 1
    for (int u = 0; u < n_chunks; ++u) {
      load_a(u);
      const uint32_t b_at = b_use + u;
      const int buf = static_cast<int>(b_at % Tile::kBBufs);
      if (u > 0) mbarrier_wait(&sm.b_full[buf], (b_at / Tile::kBBufs) & 1u);
      const int act_cis = u % Tile::kChunksPerActStage;  // chunk within the activation stage
      const uint32_t act_at = act_use + u / Tile::kChunksPerActStage;
      const uint32_t act_index = act_at % Tile::kActStages;
      const HopperQ10ActSlot<Tile>& slot = sm.act_slot[act_index];
      const bool has_next = u + 1 < n_chunks;
      const uint32_t b_base = shared_address(sm.b[buf][set]);

      // false where the warp's 16 rows are all padding
      const bool live = warp_pair < w.pair_count;
      const int pair0 = warp_pair + group;
      const float a_scale[2] = {slot.act_scale[pair0][act_cis], slot.act_scale[pair0 + 8][act_cis]};

#pragma unroll
      for (int jb = 0; jb < Tile::kSpansPerChunk; jb += Tile::kSpanBatch) {
        // The batch's span code sums per pair (formats with an offset).
        float a_sum[Tile::kSpanBatch][2] = {};
        if constexpr (Tile::kOffset) {
#pragma unroll
          for (int b = 0; b < Tile::kSpanBatch; ++b)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              int32_t total = 0;
#pragma unroll
              for (int q = 0; q < Tile::kSpan / kQ10SumValues; ++q)
                total += slot.act_sum[pair0 + 8 * h]
                                     [(act_cis * Tile::kChunk + (jb + b) * Tile::kSpan) / kQ10SumValues + q];
              a_sum[b][h] = static_cast<float>(total);
            }
        }
#pragma unroll
        for (int g = 0; g < Tile::kDotGroups; ++g) {
          // ---- the batch's exact integer span dots over column group g: per span S/16 wgmma k16
          // steps, the accumulator restarted; one commit and one wait for the batch -------------
#pragma unroll
          for (int b = 0; b < Tile::kSpanBatch; ++b) mma::fence_accumulators(span_dot[b]);
          mma::wgmma_fence();
#pragma unroll
          for (int b = 0; b < Tile::kSpanBatch; ++b)
#pragma unroll
            for (int step = 0; step < Tile::kSteps; ++step) {
              const int k16 = (jb + b) * Tile::kSteps + step;
              const uint64_t desc = mma::wgmma_desc(b_base + 2 * k16 * Tile::kCoreLeadingBytes +
                                                        g * (Tile::kDotCols / 8) * Tile::kCoreStrideBytes,
                                                    Tile::kCoreLeadingBytes, Tile::kCoreStrideBytes);
              Span::template step_wgmma_rs<Tile::kDotCols>(span_dot[b], a_frag[k16], desc, step);
            }
          mma::wgmma_commit();
          // While the products run: the next chunk, when the consumers decode.
          if constexpr (!Tile::kDecoderGroup)
            if (jb == 0 && has_next)
              hopper_q10_decode_step<F, Tile>(sm, rows, decoder, raw_use, b_at + 1, u + 1,
                                              n_chunks);
          mma::wgmma_wait<0>();
#pragma unroll
          for (int b = 0; b < Tile::kSpanBatch; ++b) mma::fence_accumulators(span_dot[b]);

          // ---- fold: fold_span<F>'s operations, one for one, the batch's spans in order --------
          // Per element acc = fmaf(dot, w_scale * a_scale, acc) (then the offset's term) for span
          // jb + b, b = 0, 1, ...: each element's own chain, whatever order the lanes' elements take.
          if (live) {
            // Span jb + b of the lane's columns 16 q + 2 tig + {0, 1}, 16 q + 8 + 2 tig + {0, 1},
            // whose span scales are w_scale.
            auto fold = [&](int b, int q, const float4& w_scale4) {
              const float w_scale[4] = {w_scale4.x, w_scale4.y, w_scale4.z, w_scale4.w};
              float w_offset[4] = {};
              if constexpr (Tile::kOffset) {
                const float4 o = hopper_q10_lane_scales<Tile>(&sm.b_offset[buf][set][jb + b][g * Tile::kDotCols], q, tig);
                w_offset[0] = o.x, w_offset[1] = o.y, w_offset[2] = o.z, w_offset[3] = o.w;
              }
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                const int jj = 2 * q + e / 2;  // 8-column block of the group
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                  const int d = 4 * jj + 2 * h + e % 2;                             // in the span dot
                  const int r = 4 * (g * Tile::kDotCols / 8 + jj) + 2 * h + e % 2;  // in the accumulators
                  acc[r] = fmaf(span_dot[b][d], w_scale[e] * a_scale[h], acc[r]);
                  if constexpr (Tile::kOffset) acc[r] = fmaf(a_sum[b][h], w_offset[e] * a_scale[h], acc[r]);
                }
              }
            };
            auto scales = [&](int j, int q) {
              return hopper_q10_lane_scales<Tile>(&sm.b_scale[buf][set][j][g * Tile::kDotCols], q, tig);
            };
            if constexpr (Tile::kChunkScale) {  // the batch's spans share their scale (and products)
#pragma unroll
              for (int q = 0; q < Tile::kDotCols / 16; ++q) {
                const float4 w_scale = scales(jb, q);
#pragma unroll
                for (int b = 0; b < Tile::kSpanBatch; ++b) fold(b, q, w_scale);
              }
            } else {
#pragma unroll
              for (int b = 0; b < Tile::kSpanBatch; ++b)
#pragma unroll
                for (int q = 0; q < Tile::kDotCols / 16; ++q) fold(b, q, scales(jb + b, q));
            }
          }
        }
      }
      mbarrier_arrive(&sm.b_empty[buf]);  // products done, scales read
      if (release_acts && (act_cis == Tile::kChunksPerActStage - 1 || u == n_chunks - 1))
        mbarrier_arrive(&sm.act_empty[act_index]);  // the stage is read, by the unit's last item
    }
    b_use += n_chunks;
    raw_use += n_stages;
    if (release_acts) act_use += n_act_stages;

    // ---- epilogue ----------------------------------------------------------------------------
    if constexpr (Tile::kOps == 2) {
      // Lane holds gate (r even) and up (r odd) of feature feature_base + 4j + tig, pairs group and
      // group + 8; the consumer's 64 features are one requantisation block.
      const int f = args.out_rows;
      const int feature_base = (w.col_begin + col_base) / 2;
      const int n_blocks = f / kQ10BlockValues;
      // Each half h (rows group + 8h of the warp's 16) whose 8 rows are all padding skips SwiGLU
      // and the requantisation (the test is warp-uniform); a warp of padding rows also skips its
      // fold.
#pragma unroll
      for (int h = 0; h < 2 && warp_pair + 8 * h < w.pair_count; ++h) {
        const int pair = warp_pair + group + 8 * h;
        float hv[16];
        float amax = 0.0f;
#pragma unroll
        for (int j = 0; j < 16; ++j) {
          const int r = 4 * j + 2 * h;
          hv[j] = swiglu(acc[r], acc[r + 1]);
          amax = quant_amax_step(amax, hv[j]);
        }
        amax = quant_amax_merge(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        amax = quant_amax_merge(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
        // NOTE: the codes of quantize_block_q10 (pipeline/arith_q10.hpp). Where every row of
        // the warp has a scale of 0 or one in q10_reciprocal_applies' range, each code's quotient
        // comes from the scale's reciprocal (q10_quotient: the same bits as the division, one
        // division per row instead of one per value); else each row divides, as the rule does.
        const float scale = amax / static_cast<float>(kQ10MaxCode);
        int code[16];
        if (__all_sync(0xffffffffu, scale == 0.0f || q10_reciprocal_applies(scale))) {
          const float r = scale == 0.0f ? 0.0f : 1.0f / scale;
#pragma unroll
          for (int j = 0; j < 16; ++j)
            code[j] = q10_code(scale == 0.0f ? 0.0f : q10_quotient(hv[j], scale, r));
        } else {
#pragma unroll
          for (int j = 0; j < 16; ++j) code[j] = q10_code(scale == 0.0f ? 0.0f : hv[j] / scale);
        }
        int sums[4];
#pragma unroll
        for (int s = 0; s < 4; ++s) {
          sums[s] = code[4 * s] + code[4 * s + 1] + code[4 * s + 2] + code[4 * s + 3];
          sums[s] += __shfl_xor_sync(0xffffffffu, sums[s], 1);
          sums[s] += __shfl_xor_sync(0xffffffffu, sums[s], 2);
        }
        if (pair < w.pair_count && feature_base < f) {  // f % 64 == 0: all 64 valid or none
          const int64_t out_row = static_cast<int64_t>(w.pair_begin) + pair;
#pragma unroll
          for (int j = 0; j < 16; ++j)
            args.h_codes[out_row * f + feature_base + 4 * j + tig] = __int2half_rn(code[j]);
          // The fp32 intermediates, where a caller asked for them (tests, the bench's checks): a
          // loop of their own, so that the usual launch issues none of their address arithmetic.
          if (args.h_out != nullptr || args.gate_out != nullptr || args.up_out != nullptr) {
#pragma unroll
            for (int j = 0; j < 16; ++j) {
              const int64_t at = out_row * f + feature_base + 4 * j + tig;
              const int r = 4 * j + 2 * h;
              if (args.h_out != nullptr) args.h_out[at] = hv[j];
              if (args.gate_out != nullptr) args.gate_out[at] = acc[r];
              if (args.up_out != nullptr) args.up_out[at] = acc[r + 1];
            }
          }
          if (tig == 0) {
            args.h_scales[out_row * n_blocks + feature_base / kQ10BlockValues] = scale;
#pragma unroll
            for (int s = 0; s < 4; ++s) args.h_sums[out_row * (f / kQ10SumValues) + feature_base / kQ10SumValues + s] = sums[s];
          }
        }
      }
    } else {
      const int rows = args.out_rows;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int pair = warp_pair + group + 8 * h;
        if (pair >= w.pair_count) continue;
        float* out = args.down_out + (static_cast<int64_t>(w.pair_begin) + pair) * rows;
        // rows % 64 == 0 and an even row: both of a lane's values are in the row, 8-byte aligned
        // where down_out is (the launcher checks).
#pragma unroll
        for (int j = 0; j < Tile::kAccRegs / 4; ++j) {
          const int row = w.col_begin + col_base + 8 * j + 2 * tig;
          if (row < rows) *reinterpret_cast<float2*>(out + row) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
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
