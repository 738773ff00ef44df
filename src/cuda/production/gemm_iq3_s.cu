#include "cuda/production/grouped_gemm_kernel.cuh"
#include "formats/iq3_s.hpp"

namespace strata::cuda::production {
template void launch_grouped_gemm<Iq3S>(const GemmArgs&, TileKind, cudaStream_t);
}  // namespace strata::cuda::production
