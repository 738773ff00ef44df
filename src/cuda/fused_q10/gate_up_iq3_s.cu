#include "cuda/fused_q10/q10_product_kernel.cuh"
#include "formats/iq3_s.hpp"

namespace strata::cuda::fused_q10 {
template void launch_q10_gate_up<Iq3S>(const Q10ProductArgs&, Q10TileKind, cudaStream_t);
}  // namespace strata::cuda::fused_q10
