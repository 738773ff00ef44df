// The fused-hopper arm's two kernels (sm_90a): gate/up + SwiGLU + requant, and down, on TMA-style
// bulk copies and wgmma int8. Host-side view: arguments, tile kinds and the launchers.
#pragma once
#include <cuda_runtime.h>

#include "cuda/blocks/product_args.hpp"

namespace strata::cuda::fused_hopper {

using blocks::ProductArgs;

// kLarge: 128 pairs x 64 features (gate/up) or 128 rows (down) per CTA; kSmall: 64 pairs x 128
// features or 256 rows. A speed choice only.
enum class HopperTileKind { kLarge, kSmall };

int hopper_tile_pairs(HopperTileKind kind);

// Gate/up: args.weights[0] (gate), [1] (up) with weights_end, expert_stride_bytes, row_bytes,
// in_features (d), out_features (f), act_codes (rows 16-byte aligned) / act_scales, pair_row,
// expert_offsets, tile_offsets (of hopper_tile_pairs(tile)), n_expert -> h_codes, h_scales,
// h_half_sums, and h_out / product_out[0] (gate) / product_out[1] (up) where not null.
// Down: the same fields for the one tensor in [0] (in_features f, out_features d) -> product_out[0].
template <class F>
void launch_hopper_gate_up(const ProductArgs& args, HopperTileKind tile, cudaStream_t stream);
template <class F>
void launch_hopper_down(const ProductArgs& args, HopperTileKind tile, cudaStream_t stream);

// Whether the loaded module carries the sm_90a kernels for the current device (an sm_90 device and
// a build that includes 90a).
bool hopper_kernels_loaded();

}  // namespace strata::cuda::fused_hopper
