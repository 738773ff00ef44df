// Arguments of the wmma chain kernels (native_kernel_wmma.cuh): one struct for the gate/up
// launch and the down launch; no GPU runtime header, so the HIP object check includes it too.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::cuda::fused_wmma {

struct ChainArgs {
  const uint8_t* weights[2] = {nullptr,
                               nullptr};   // gate, up: [E, f, d] blocks; down: [E, d, f] in [0]
  size_t expert_stride_bytes[2] = {0, 0};  // bytes from expert e to e + 1, per tensor
  size_t row_bytes = 0;                    // bytes per weight row (both tensors alike)
  int in_features = 0;                     // K: d for gate/up, f for down; a multiple of 32
  int out_features = 0;                    // f (h features) for gate/up, d for down
  const int8_t* act_codes = nullptr;       // [rows, K] int8, rows 16-byte aligned
  const float* act_scales = nullptr;       // [rows, K/32] f32
  const int32_t* act_row = nullptr;        // [P] activation row of each sorted pair; null: the pair
  const int32_t* expert_offsets = nullptr;  // [E + 1] sorted pairs of expert e
  const int32_t* tile_offsets = nullptr;    // [E + 1] row tiles (of the tile's kPairs) before e
  int n_expert = 0;
  // gate/up + SwiGLU + requant outputs (sorted-pair rows)
  int8_t* h_codes = nullptr;       // [P, f] int8
  float* h_scales = nullptr;       // [P, f/32] f32
  int32_t* h_half_sums = nullptr;  // [P, f/16] int32
  float* h_out = nullptr;          // [P, f] f32 before requantisation, or null
  float* gate_out = nullptr;       // [P, f] f32, or null
  float* up_out = nullptr;         // [P, f] f32, or null
  // down output
  float* rows_out = nullptr;  // [P, d] f32 sorted-pair rows
};

}  // namespace strata::cuda::fused_wmma
