// Host launchers of the wmma chain kernels (CUDA), one explicit instantiation file per
// (format, product): gate_up_<format>.cu, down_<format>.cu.
#pragma once
#include <cuda_runtime.h>

#include "cuda/blocks/product_args.hpp"

namespace strata::cuda::fused_wmma {

// Pairs per row tile of the chain kernels (ProductArgs::tile_offsets of a chain launch are built with it).
int chain_tile_pairs();

// Op: GateUpOp or DownOp (chain_ops.hpp). A launch with no work items returns at once.
template <class F, class Op>
void launch_chain(const blocks::ProductArgs& args, cudaStream_t stream);

}  // namespace strata::cuda::fused_wmma
