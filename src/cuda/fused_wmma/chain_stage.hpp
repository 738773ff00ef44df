// The pieces of the wmma chain main loop that are plain arithmetic on shared tiles, written for
// host and device: the stage tiles, the weight decode and activation gather of one stage, the
// per-32 fold, and the work-item lookup. The kernel (native_kernel_wmma.cuh) calls them with its
// thread index; the CPU trap tests call them for every thread of a block in turn.
#pragma once
#include <cstdint>
#include <cstring>

#include "common/hd.hpp"
#include "cuda/fused_wmma/chain_decode.hpp"
#include "cuda/mma/mma_tile_16_layout.hpp"
#include "cuda/pipeline/tile_lookup.hpp"
#include "formats/format.hpp"
#include "pipeline/arith.hpp"

namespace strata::cuda::fused_wmma {

// One K stage of a work item: kStageSubs sub-blocks, each as two plain 16-wide k tiles.
template <class Tile>
struct StageTiles {
  alignas(
      32) int8_t weights[Tile::kStageSlices][Tile::kWeightRows][16];  // [k16][row][k]: A, lda 16
  alignas(
      32) int8_t acts[Tile::kStageSlices][Tile::kPairs][16];  // [k16][pair][k]: B col-major, ldb 16
  float weight_scale[Tile::kWeightRows][Tile::kStageSubs];    // [row][sub] f32
  float act_scale[Tile::kPairs][Tile::kStageSubs];            // [pair][sub] f32
};

// 16 bytes between 16-byte aligned addresses.
STRATA_HD_INLINE void copy16(void* dst, const void* src) {
#if STRATA_DEVICE_PASS
  struct alignas(16) Bytes16 {
    uint32_t w[4];
  };
  *static_cast<Bytes16*>(dst) = *static_cast<const Bytes16*>(src);
#else
  std::memcpy(dst, src, 16);
#endif
}

STRATA_HD_INLINE void zero16(void* dst) {
  alignas(16) const uint32_t zero[4] = {0, 0, 0, 0};
  copy16(dst, zero);
}

// The weight rows of one work item: shared row r is row first + r % split of tensor r / split
// (gate/up: split = kWeightRows / 2, gate rows then up rows; down: split = kWeightRows), and no
// row at all (zero codes, zero scale) past `limit`.
struct WeightRows {
  const uint8_t* expert_base[2] = {nullptr, nullptr};  // expert's first row, per tensor
  size_t row_bytes = 0;
  int split = 0;
  int first = 0;
  int limit = 0;

  STRATA_HD const uint8_t* row(int r) const {
    const int index = first + r % split;
    if (index >= limit) return nullptr;
    return expert_base[r / split] + static_cast<size_t>(index) * row_bytes;
  }
};

// Decodes sub-blocks stage*kStageSubs.. of every weight row into `st`. Task = (row, sub): there
// are kWeightRows * kStageSubs of them, more than the block's threads, so each thread strides.
// OnePass (trap tests only) stops after the first stride: the classic missing rows 64-127.
template <class F, class Tile, class Fault = NoDecodeFault, bool OnePass = false>
STRATA_HD void decode_weight_stage(int thread, const WeightRows& rows, int stage, int n_subs,
                                   StageTiles<Tile>& st) {
  constexpr int kSubsPerBlock = F::kBlockValues / kSubBlockValues;
  constexpr int kTasks = Tile::kWeightRows * Tile::kStageSubs;
  constexpr int kStride = OnePass ? kTasks : Tile::kThreads;
  for (int task = thread; task < kTasks; task += kStride) {
    const int r = task / Tile::kStageSubs, s = task % Tile::kStageSubs;
    const int sub = stage * Tile::kStageSubs + s;
    alignas(16) uint32_t words[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    float scale = 0.0f;
    const uint8_t* row = rows.row(r);
    if (row != nullptr && sub < n_subs)
      scale = ChainDecoder<F, Fault>::decode(
          row + static_cast<size_t>(sub / kSubsPerBlock) * F::kBlockBytes, sub % kSubsPerBlock,
          words);
    copy16(&st.weights[2 * s][0][0] + mma::a_index(r, 0, 16), words);  // k 0..15 of the sub-block
    copy16(&st.weights[2 * s + 1][0][0] + mma::a_index(r, 0, 16), words + 4);  // k 16..31
    st.weight_scale[r][s] = scale;
  }
}

// Gathers the stage's activation codes and scales of the item's pairs. act_row[p]: activation
// row of pair p, -1 past the expert's last pair (zeros).
template <class Tile>
STRATA_HD void gather_act_stage(int thread, const int32_t* act_row /*[kPairs]*/,
                                const int8_t* codes /*[rows, K]*/,
                                const float* scales /*[rows, K/32]*/, int K, int stage,
                                StageTiles<Tile>& st) {
  const int n_subs = K / kSubBlockValues;
  for (int task = thread; task < Tile::kPairs * Tile::kStageSlices; task += Tile::kThreads) {
    const int p = task / Tile::kStageSlices, slice = task % Tile::kStageSlices;
    const int k = stage * Tile::kStageSubs * kSubBlockValues + 16 * slice;
    int8_t* dst = &st.acts[slice][0][0] + mma::b_index(0, p, 16);
    const int32_t row = act_row[p];
    if (row >= 0 && k < K)
      copy16(dst, codes + static_cast<int64_t>(row) * K + k);
    else
      zero16(dst);
  }
  for (int task = thread; task < Tile::kPairs * Tile::kStageSubs; task += Tile::kThreads) {
    const int p = task / Tile::kStageSubs, s = task % Tile::kStageSubs;
    const int sub = stage * Tile::kStageSubs + s;
    const int32_t row = act_row[p];
    st.act_scale[p][s] =
        (row >= 0 && sub < n_subs) ? scales[static_cast<int64_t>(row) * n_subs + sub] : 0.0f;
  }
}

// Which scale slot the fold of the stage's sub-block s reads. The kernels use kOwn only.
enum class SlotFault {
  kOwn,        // slot s: the sub-block's own scale
  kPer16,      // slots indexed per 16-wide k tile (2s): a per-16 scale table read as per-32
  kNeighbour,  // slot s + 1: the next sub-block's scale
};

template <SlotFault Fault = SlotFault::kOwn>
STRATA_HD_INLINE int scale_slot(int s, int n_slots) {
  if constexpr (Fault == SlotFault::kPer16) return (2 * s) % n_slots;
  if constexpr (Fault == SlotFault::kNeighbour) return (s + 1) % n_slots;
  return s;
}

// One element's fold of the int32 dot over sub-block s: fold_slice<F> with the slot's weight and
// activation scales (formats without split scales or offsets: acc = fmaf(dot, w * a, acc)).
template <class F, SlotFault Fault = SlotFault::kOwn>
STRATA_HD_INLINE float fold_chain(float acc, int32_t dot, const float* weight_scales /*[n_slots]*/,
                                  const float* act_scales /*[n_slots]*/, int s, int n_slots) {
  static_assert(!F::kSplitScales && !F::kHasOffset,
                "one scale per 32-wide slice, no activation-sum term");
  const int slot = scale_slot<Fault>(s, n_slots);
  SubScale w;
  w.scale[0] = w.scale[1] = weight_scales[slot];
  w.offset[0] = w.offset[1] = 0.0f;
  const int32_t isum[2] = {dot, 0};
  const int32_t asum[2] = {0, 0};
  return fold_slice<F>(acc, isum, asum, w, act_scales[slot]);
}

}  // namespace strata::cuda::fused_wmma
