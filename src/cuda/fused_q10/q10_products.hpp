// The q10 fused arm's two kernels (sm_80 path, mma.sync m16n8k16 f16): gate/up + SwiGLU + h
// requantised per 64 features, and down to one fp32 row per sorted pair. Host-side view:
// arguments, tile kinds and the per-format launchers (one generated instantiation file per stage
// and format, from the list in q10_formats.hpp).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace strata::cuda::fused_q10 {

struct Q10ProductArgs {
  // gate and up (weights[0], weights[1], same format) or down alone (weights[0]).
  const uint8_t* weights[2] = {nullptr, nullptr};  // [E, out_rows, K] native blocks, 2-byte aligned
  size_t expert_stride_bytes[2] = {0, 0};
  size_t row_bytes = 0;               // bytes per weight row
  int in_features = 0;                // K: a multiple of 32 and of the format's block
  int out_rows = 0;                   // weight rows per expert and tensor: f (gate/up) or d (down)
  const __half* act_codes = nullptr;  // [rows, K] f16 codes, 16-byte aligned
  const float* act_scales = nullptr;  // [rows, ceil(K/64)] f32
  const int32_t* act_sums = nullptr;  // [rows, K/16] int32 code sums, 8-byte aligned (offset formats)
  const int32_t* pair_token = nullptr;  // [P] activation row of each sorted pair; null: the pair
  const int32_t* expert_offsets = nullptr;  // [E + 1] sorted pairs of expert e
  const int32_t* tile_offsets = nullptr;    // [E + 1] pair tiles (of the tile's kPairs) before e
  int n_expert = 0;
  // gate/up outputs, sorted-pair rows
  __half* h_codes = nullptr;  // [P, f] f16 codes
  float* h_scales = nullptr;  // [P, ceil(f/64)] f32
  int32_t* h_sums = nullptr;  // [P, f/16] int32
  float* h_out = nullptr;     // [P, f] f32 h before requantisation, or null
  float* gate_out = nullptr;  // [P, f] or null
  float* up_out = nullptr;    // [P, f] or null
  // down output, sorted-pair rows
  float* down_out = nullptr;  // [P, d] f32
};

enum class Q10TileKind { kLarge, kSmall };

int q10_tile_pairs(Q10TileKind kind);

// Whether the many-pair tile may stage its raw blocks in shared memory (Q10LargeStaged, where the
// format and the device allow): yes, unless STRATA_Q10_SM80_RAW=direct (the tests run the same layers
// both ways). And how many launches did, in this process.
bool q10_staged_allowed();
void count_q10_staged_launch();
uint64_t q10_staged_launches();
Q10TileKind q10_tile_for(double mean_pairs);

template <class F>
void launch_q10_gate_up(const Q10ProductArgs& args, Q10TileKind tile, cudaStream_t stream);
template <class F>
void launch_q10_down(const Q10ProductArgs& args, Q10TileKind tile, cudaStream_t stream);

}  // namespace strata::cuda::fused_q10
