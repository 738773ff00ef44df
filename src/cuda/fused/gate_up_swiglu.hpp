// The fused arm's first kernel: gate and up products of every routed pair, SwiGLU in registers,
// and h requantised per 32 features (the rule of quantize_block32), written as the int8 codes,
// scales and half sums that the production down GEMM consumes. No fp32 gate/up/h round trip.
#pragma once
#include <cuda_runtime.h>

#include "cuda/blocks/product_args.hpp"

namespace strata::cuda::fused {

enum class FusedTileKind { kLarge, kSmall };

// Pairs per row tile of a configuration (ProductArgs::tile_offsets must be built with it).
int fused_tile_pairs(FusedTileKind kind);
// The configuration for a mean of `mean_pairs` routed pairs per expert (a speed choice only).
FusedTileKind fused_tile_for(double mean_pairs);

// Format-specialised launchers, one explicit instantiation file per gate/up format. Reads
// args.weights[0] (gate) and [1] (up), expert_stride_bytes, row_bytes, in_features (d: a multiple
// of 64 and of the format's block), out_features (f: a multiple of 32), act_codes / act_scales,
// pair_row, expert_offsets, tile_offsets (of fused_tile_pairs(tile)), n_expert; writes h_codes,
// h_scales, h_half_sums, and h_out / product_out[0] (gate) / product_out[1] (up) where not null.
template <class F>
void launch_fused_gate_up(const blocks::ProductArgs& args, FusedTileKind tile, cudaStream_t stream);

}  // namespace strata::cuda::fused
