// Launcher templates of the q10 wmma kernels, included by the per-format instantiation files.
#pragma once
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/common/persistent_launch.hpp"
#include "cuda/fused_q10/wmma_q10_kernel.cuh"
#include "cuda/fused_q10/wmma_q10_products.hpp"

namespace strata::cuda::fused_q10 {

// Persistent grid: as many CTAs as fit on the device at once; they stride over the work items.
template <class F, class Op>
void launch_wmma_q10(const WmmaQ10Args& args, cudaStream_t stream) {
  using Tile = WmmaQ10TileDefault;
  auto kernel = wmma_q10_kernel<F, Op, Tile>;
  const int grid = persistent_grid(kernel, Tile::kThreads, 0);
  kernel<<<grid, Tile::kThreads, 0, stream>>>(args);
  STRATA_CUDA_CHECK_LAUNCH("wmma_q10_kernel");
}

template <class F>
void launch_wmma_q10_gate_up(const WmmaQ10Args& args, cudaStream_t stream) {
  launch_wmma_q10<F, GateUpOp>(args, stream);
}

template <class F>
void launch_wmma_q10_down(const WmmaQ10Args& args, cudaStream_t stream) {
  launch_wmma_q10<F, DownOp>(args, stream);
}

}  // namespace strata::cuda::fused_q10
