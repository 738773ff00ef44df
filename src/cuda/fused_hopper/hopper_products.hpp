// The fused-hopper arm's two kernels (sm_90a): gate/up + SwiGLU + requant, and down, on TMA-style
// bulk copies and wgmma int8. Host-side view: arguments, tile kinds and the launchers.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace strata::cuda::fused_hopper {

struct ProductArgs {
  // Stacked weight tensors in native blocks: gate and up (interleaved per feature) or down alone.
  const uint8_t* weights[2] = {nullptr, nullptr};  // [E, out_rows, K] native blocks, 2-byte aligned
  const uint8_t* weights_end[2] = {nullptr, nullptr};  // one past the last byte a row may reach
  size_t expert_stride_bytes[2] = {0, 0};
  size_t row_bytes = 0;                    // bytes per weight row
  int in_features = 0;                     // K: a multiple of the tile's stage
  int out_rows = 0;                        // weight rows per expert and tensor (f, or d for down)
  const int8_t* act_codes = nullptr;       // [rows, K] int8, 16-byte aligned (K % 16 == 0)
  const float* act_scales = nullptr;       // [rows, K/32] f32
  const int32_t* pair_token = nullptr;     // [P] activation row of each sorted pair; null: the pair
  const int32_t* expert_offsets = nullptr; // [E + 1] sorted pairs of expert e
  const int32_t* tile_offsets = nullptr;   // [E + 1] pair tiles (of the tile's kPairs) before e
  int n_expert = 0;
  // gate/up outputs (sorted-pair rows): h codes, scales and half sums; optional f32 debug rows
  int8_t* h_codes = nullptr;               // [P, f]
  float* h_scales = nullptr;               // [P, f/32]
  int32_t* h_half_sums = nullptr;          // [P, f/16]
  float* h_out = nullptr;                  // [P, f] or null
  float* gate_out = nullptr;               // [P, f] or null
  float* up_out = nullptr;                 // [P, f] or null
  // down output (sorted-pair rows)
  float* down_out = nullptr;               // [P, d]
};

// kLarge: 128 pairs x 64 features (gate/up) or 128 rows (down) per CTA; kSmall: 64 pairs x 128
// features or 256 rows. A speed choice only.
enum class HopperTileKind { kLarge, kSmall };

int hopper_tile_pairs(HopperTileKind kind);

template <class F>
void launch_hopper_gate_up(const ProductArgs& args, HopperTileKind tile, cudaStream_t stream);
template <class F>
void launch_hopper_down(const ProductArgs& args, HopperTileKind tile, cudaStream_t stream);

// Whether the loaded module carries the sm_90a kernels for the current device (an sm_90 device and
// a build that includes 90a).
bool hopper_kernels_loaded();

}  // namespace strata::cuda::fused_hopper
