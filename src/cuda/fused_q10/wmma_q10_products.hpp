// Host launchers of the q10 wmma kernels (CUDA; wmma_q10_kernel.cuh), one explicit instantiation
// file per (format, product): wmma_gate_up_<format>.cu, wmma_down_<format>.cu.
#pragma once
#include <cuda_runtime.h>

#include "cuda/fused_q10/wmma_q10_args.hpp"

namespace strata::cuda::fused_q10 {

// Pairs per pair tile of the wmma kernels (the tile_offsets of WmmaQ10Args are built with it).
inline constexpr int kWmmaQ10TilePairs = WmmaQ10TileDefault::kPairs;

// gate/up + SwiGLU + h requantised per 64 features, and down to one fp32 row per sorted pair.
// A launch with no work items returns at once.
template <class F>
void launch_wmma_q10_gate_up(const WmmaQ10Args& args, cudaStream_t stream);
template <class F>
void launch_wmma_q10_down(const WmmaQ10Args& args, cudaStream_t stream);

}  // namespace strata::cuda::fused_q10
