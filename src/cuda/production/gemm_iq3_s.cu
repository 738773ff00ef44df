#include "cuda/production/block_decode_iq3_s.hpp"
#include "cuda/production/grouped_gemm_kernel.cuh"

namespace strata::cuda::production {
template void launch_grouped_gemm<Iq3S>(const GemmArgs&, TileKind, cudaStream_t);
}  // namespace strata::cuda::production
