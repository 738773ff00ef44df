// Host side of the q10 Hopper kernels (hopper_q10_kernel.cuh): the tensor maps of the raw weight
// stages, the launch, and the configuration table per format, role and tile. Included by the
// per-format instantiation files (cmake/q10_hopper_instance.cu.in).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/persistent_launch.hpp"
#include "cuda/common/tensor_map.hpp"
#include "cuda/fused_q10/hopper_q10_kernel.cuh"
#include "cuda/fused_q10/hopper_q10_products.hpp"

namespace strata::cuda::fused_q10 {

inline constexpr size_t kHopperQ10SharedLimit = 227 * 1024;  // one CTA's dynamic shared memory on sm_90

// The tensor maps of the launch's weight tensors ([E, out_rows, row_bytes] bytes), where TMA can
// move the raw stages (HopperQ10Tile::kRawTma): 16-byte-aligned tensors (as a GGUF file's are),
// expert strides of whole 16-byte units, every expert's rows inside [weights, weights_end). The
// map's rows are groups of G = 16 / gcd(row_bytes, 16) weight rows (whole 16-byte units; G = 1 for
// rows that are), so out_rows must be a multiple of G (it is on the Hopper arm: f and d are
// multiples of 64). False: the per-row bulk copies.
template <class Tile>
bool hopper_q10_raw_maps(HopperQ10Args& a) {
  if constexpr (!Tile::kRawTma) {
    (void)a;
    return false;
  } else {
    const Q10ProductArgs& p = a.p;
    if (p.n_expert < 1 || p.out_rows < 1 || p.row_bytes == 0) return false;
    int shift = 0;  // G = 1 << shift rows per 16-byte group
    while (((p.row_bytes << shift) & 15u) != 0) ++shift;
    const int group = 1 << shift;
    if (p.out_rows % group != 0 || Tile::kBoxRows % group != 0) return false;
    const auto rows = static_cast<uint64_t>(p.out_rows), experts = static_cast<uint64_t>(p.n_expert);
    for (int op = 0; op < Tile::kOps; ++op) {
      const uint64_t stride = p.expert_stride_bytes[op], expert_bytes = rows * p.row_bytes;
      if (p.weights[op] == nullptr || a.weights_end[op] == nullptr || stride < expert_bytes) return false;
      const auto available = static_cast<uint64_t>(a.weights_end[op] - p.weights[op]);
      if (available < expert_bytes || (experts - 1) > (available - expert_bytes) / stride) return false;
      const uint64_t group_bytes = group * p.row_bytes;
      const uint64_t dims[3] = {group_bytes, rows / group, experts};
      const uint32_t box[3] = {static_cast<uint32_t>(Tile::kRawStride), static_cast<uint32_t>(Tile::kBoxRows / group),
                               1u};
      if (!encode_byte_tensor_map(a.raw_map[op], p.weights[op], dims, group_bytes, stride, box)) return false;
    }
    a.raw_group_shift = shift;
    return true;
  }
}

template <class F, class Tile>
void launch_hopper_q10_tile(const HopperQ10Args& args, cudaStream_t stream) {
  constexpr size_t kShared = hopper_q10_shared_bytes<F, Tile>();
  static_assert(kShared <= kHopperQ10SharedLimit, "over the sm_90 shared-memory limit of one CTA");
  auto kernel = hopper_q10_kernel<F, Tile>;
  const int sms = persistent_grid(kernel, Tile::kThreads, kShared);  // one CTA per SM
  HopperQ10Args a = args;
  a.raw_group_shift = 0;
  a.raw_tma = hopper_q10_raw_tma_allowed() && hopper_q10_raw_maps<Tile>(a) ? 1 : 0;
  if (a.raw_tma == 0) a.raw_group_shift = 0;
  a.act_group = hopper_q10_act_group();
  kernel<<<sms, Tile::kThreads, kShared, stream>>>(a);
  STRATA_CUDA_CHECK_LAUNCH("hopper_q10_kernel");
  if (a.raw_tma != 0) count_hopper_q10_raw_tma_launch();
}

// ---- configurations ------------------------------------------------------------------------------

// One candidate configuration: the raw-block ring (values per stage, stages in flight), the
// activation ring (values per stage, a part of a raw stage, and stages in flight) and the B
// buffers the decoder may fill ahead of the consumers.
struct HopperQ10Config {
  int stage_values;
  int stages;
  int act_stage_values;
  int act_stages;
  int b_bufs;
};

// One stage size for both rings.
constexpr HopperQ10Config same_rings(int stage_values, int stages, int b_bufs) {
  return HopperQ10Config{stage_values, stages, stage_values, stages, b_bufs};
}

template <class F, int Ops, int Pairs, HopperQ10Config C>
using HopperQ10TileOf =
    HopperQ10Tile<F, Ops, C.stage_values, C.stages, Pairs, C.act_stage_values, C.act_stages, C.b_bufs>;

template <class F, int Ops, int Pairs, HopperQ10Config C>
constexpr bool hopper_q10_fits() {
  if constexpr (C.stage_values % F::kBlockValues != 0) {
    return false;
  } else {
    return hopper_q10_shared_bytes<F, HopperQ10TileOf<F, Ops, Pairs, C>>() <= kHopperQ10SharedLimit;
  }
}

// The first candidate that holds whole blocks and fits in shared memory.
template <class F, int Ops, int Pairs, HopperQ10Config C0, HopperQ10Config... Rest>
constexpr HopperQ10Config hopper_q10_first_fit() {
  if constexpr (hopper_q10_fits<F, Ops, Pairs, C0>()) {
    return C0;
  } else {
    static_assert(sizeof...(Rest) > 0, "no configuration of the q10 Hopper kernels fits this format");
    return hopper_q10_first_fit<F, Ops, Pairs, Rest...>();
  }
}

// B buffers: three where a decoder warpgroup runs ahead of the consumers on the 128-pair tile; two
// on the 64-pair tile (two B sets a buffer: a third does not fit beside 256-value stages of both
// rings) and where the consumers decode, one chunk ahead.
template <class F, int Ops, int Pairs>
inline constexpr int kHopperQ10BBufs = HopperQ10DecoderGroup<F, Ops, Pairs> && Pairs == 128 ? 3 : 2;

// After the lead candidates, those that keep 256-value raw stages but move the activations in
// parts of them: for the formats whose large blocks (the K-quants) do not fit two whole stages of
// both; then the same with two B buffers.
template <class F, int Ops, int Pairs, HopperQ10Config... Lead>
constexpr HopperQ10Config hopper_q10_fit_or_split() {
  constexpr int b = kHopperQ10BBufs<F, Ops, Pairs>;
  return hopper_q10_first_fit<F, Ops, Pairs, Lead..., HopperQ10Config{256, 2, 128, 3, b},
                              HopperQ10Config{256, 2, 128, 2, b}, HopperQ10Config{256, 2, 64, 4, b},
                              HopperQ10Config{256, 2, 64, 3, b}, HopperQ10Config{256, 2, 64, 2, b},
                              HopperQ10Config{256, 2, 128, 2, 2}, HopperQ10Config{256, 2, 64, 2, 2}>();
}

// The configuration: gate/up in stages of 256 values (one 256-value block per row), down in stages
// of 128 (3 or 4 in flight) where the format's blocks allow, else a split ring. A row of K values
// that is no multiple of the stage ends in a stage of the chunks left (any K % 64 == 0 of whole
// blocks).
template <class F, int Ops, int Pairs>
constexpr HopperQ10Config hopper_q10_config() {
  constexpr int b = kHopperQ10BBufs<F, Ops, Pairs>;
  if constexpr (Ops == 2) {
    return hopper_q10_fit_or_split<F, Ops, Pairs, same_rings(256, 2, b), same_rings(128, 3, b),
                                   same_rings(128, 2, b)>();
  } else if constexpr (Pairs == 128) {
    return hopper_q10_fit_or_split<F, Ops, Pairs, same_rings(128, 4, b), HopperQ10Config{128, 3, 128, 4, b},
                                   same_rings(128, 3, b), same_rings(128, 2, b), same_rings(256, 2, b)>();
  } else {
    return hopper_q10_fit_or_split<F, Ops, Pairs, HopperQ10Config{128, 3, 128, 4, b}, same_rings(128, 3, b),
                                   same_rings(128, 2, b), same_rings(256, 2, b)>();
  }
}

template <class F, int Ops, int Pairs>
void launch_hopper_q10_pairs(const HopperQ10Args& args, cudaStream_t stream) {
  if (args.p.in_features % kQ10BlockValues != 0 || args.p.in_features % F::kBlockValues != 0)
    throw Error(Status::kInternal,
                "q10 Hopper kernels: K = " + std::to_string(args.p.in_features) +
                    " is no multiple of 64 and of the block (the arm's supports() let it through)");
  constexpr HopperQ10Config kConfig = hopper_q10_config<F, Ops, Pairs>();
  launch_hopper_q10_tile<F, HopperQ10TileOf<F, Ops, Pairs, kConfig>>(args, stream);
}

// `pairs` (64 or 128) must be the tile the grouping's tile offsets were built for.
template <class F>
void launch_hopper_q10_gate_up(const HopperQ10Args& args, int pairs, cudaStream_t stream) {
  if (pairs == 128) launch_hopper_q10_pairs<F, 2, 128>(args, stream);
  else launch_hopper_q10_pairs<F, 2, 64>(args, stream);
}

template <class F>
void launch_hopper_q10_down(const HopperQ10Args& args, int pairs, cudaStream_t stream) {
  if (reinterpret_cast<uintptr_t>(args.p.down_out) % alignof(float2) != 0)
    throw Error(Status::kInternal, "q10 Hopper kernels: the down rows are not 8-byte aligned");
  if (pairs == 128) launch_hopper_q10_pairs<F, 1, 128>(args, stream);
  else launch_hopper_q10_pairs<F, 1, 64>(args, stream);
}

}  // namespace strata::cuda::fused_q10
