// The q10 Hopper kernels (sm_90a: bulk copies + wgmma f16, warp-specialised): gate/up + SwiGLU + h
// requantised per 64 features, and down to one fp32 row per sorted pair. Host-side view.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/tensor_map.hpp"
#include "cuda/fused_q10/q10_products.hpp"

namespace strata::cuda::fused_q10 {

// Routed pairs per CTA tile of the Hopper kernels: 64 (the consumers split the columns) or 128
// (they split the pairs and decode each weight tile once for both). The tile offsets are built for
// the one chosen; a speed choice only.
int hopper_q10_tile_pairs(double mean_pairs_per_expert);

struct HopperQ10Args {
  Q10ProductArgs p;                                    // as the sm_80 kernels take them
  const uint8_t* weights_end[2] = {nullptr, nullptr};  // one past the last byte a row may reach
  // Set by the launcher, not the caller: tensor maps of the weights (one per tensor), with which the
  // producer moves each raw stage as one TMA box per tensor, where the layout allows (raw_tma = 1);
  // else one bulk copy per weight row.
  TensorMap raw_map[2] = {};
  int raw_tma = 0;
  // log2 of the rows per 16-byte group of the maps (rows that are no whole 16-byte units:
  // 16 / gcd(row bytes, 16) rows are); 0 with the per-row copies.
  int raw_group_shift = 0;
  // Set by the launcher: column blocks per unit of work (HopperQ10Walk), whose items share one copy
  // of their pair tile's activation stages where the ring holds a whole row of them.
  int act_group = 1;
};

// Whether the launchers may move the raw stages by TMA: yes, unless STRATA_Q10_RAW_COPY=rows (the
// tests run the same layers both ways). And how many launches did, in this process.
bool hopper_q10_raw_tma_allowed();
// The column blocks per unit of the q10 Hopper kernels: kHopperQ10ActGroup, or STRATA_Q10_ACT_GROUP
// (1 … 64; 1: every item moves its own activation stages). Throws naming the variable on any other
// value.
inline constexpr int kHopperQ10ActGroup = 4;
int hopper_q10_act_group();
void count_hopper_q10_raw_tma_launch();
uint64_t hopper_q10_raw_tma_launches();

template <class F>
void launch_hopper_q10_gate_up(const HopperQ10Args& args, int pairs, cudaStream_t stream);
template <class F>
void launch_hopper_q10_down(const HopperQ10Args& args, int pairs, cudaStream_t stream);

}  // namespace strata::cuda::fused_q10
