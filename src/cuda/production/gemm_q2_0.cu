#include "cuda/production/block_decode_q2_0.hpp"
#include "cuda/production/grouped_gemm_kernel.cuh"

namespace strata::cuda::production {
template void launch_grouped_gemm<Q2_0>(const GemmArgs&, TileKind, cudaStream_t);
}  // namespace strata::cuda::production
