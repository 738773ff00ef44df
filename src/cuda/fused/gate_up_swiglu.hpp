// The fused arm's first kernel: gate and up products of every routed pair, SwiGLU in registers,
// and h requantised per 32 features (the rule of quantize_block32), written as the int8 codes,
// scales and half sums that the production down GEMM consumes. No fp32 gate/up/h round trip.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace strata::cuda::fused {

struct GateUpArgs {
  const uint8_t* gate_weights = nullptr;   // [E, f, d] native blocks, 2-byte aligned
  const uint8_t* up_weights = nullptr;     // [E, f, d] native blocks, same format as gate
  size_t row_bytes = 0;                    // bytes per weight row (gate and up alike)
  size_t gate_expert_stride_bytes = 0;     // bytes from expert e to e + 1
  size_t up_expert_stride_bytes = 0;
  int d = 0;                               // K: a multiple of 64 and of the format's block
  int f = 0;                               // h features: a multiple of 32
  const int8_t* act_codes = nullptr;       // [T, d] int8, one row per token
  const float* act_scales = nullptr;       // [T, d/32] f32, 8-byte aligned
  const int32_t* pair_token = nullptr;     // [P] token of each sorted pair
  const int32_t* expert_offsets = nullptr; // [E + 1] sorted pairs of expert e
  const int32_t* tile_offsets = nullptr;   // [E + 1] row tiles (of the config's kPairs) before e
  int n_expert = 0;
  int8_t* h_codes = nullptr;               // [P, f] int8, sorted-pair rows
  float* h_scales = nullptr;               // [P, f/32] f32
  int32_t* h_half_sums = nullptr;          // [P, f/16] int32
  float* h_out = nullptr;                  // [P, f] f32 h before requantisation, or null (debug)
  float* gate_out = nullptr;               // [P, f] f32 gate pre-activation, or null (debug)
  float* up_out = nullptr;                 // [P, f] f32 up pre-activation, or null (debug)
};

enum class FusedTileKind { kLarge, kSmall };

// Pairs per row tile of a configuration (the tile_offsets above must be built with it).
int fused_tile_pairs(FusedTileKind kind);
// The configuration for a mean of `mean_pairs` routed pairs per expert (a speed choice only).
FusedTileKind fused_tile_for(double mean_pairs);

// Format-specialised launchers, one explicit instantiation file per gate/up format.
template <class F>
void launch_fused_gate_up(const GateUpArgs& args, FusedTileKind tile, cudaStream_t stream);

}  // namespace strata::cuda::fused
