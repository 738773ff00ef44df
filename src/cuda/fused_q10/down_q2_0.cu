#include "cuda/fused_q10/q10_product_kernel.cuh"
#include "formats/q2_0.hpp"

namespace strata::cuda::fused_q10 {
template void launch_q10_down<Q2_0>(const Q10ProductArgs&, Q10TileKind, cudaStream_t);
}  // namespace strata::cuda::fused_q10
