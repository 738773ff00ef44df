// Launcher template of the wmma chain kernel, included by the per-format instantiation files.
#pragma once
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/common/persistent_launch.hpp"
#include "cuda/fused_wmma/launch_chain.hpp"
#include "cuda/fused_wmma/native_kernel_wmma.cuh"
#include "cuda/fused_wmma/tile_config.hpp"

namespace strata::cuda::fused_wmma {

// Persistent grid: as many CTAs as fit on the device at once; they stride over the work items.
template <class F, class Op>
void launch_chain(const blocks::ProductArgs& args, cudaStream_t stream) {
  using Tile = ChainTileDefault;
  auto kernel = native_kernel_wmma<F, Op, Tile>;
  const int grid = persistent_grid(kernel, Tile::kThreads, 0);
  kernel<<<grid, Tile::kThreads, 0, stream>>>(args);
  STRATA_CUDA_CHECK_LAUNCH("native_kernel_wmma");
}

}  // namespace strata::cuda::fused_wmma
