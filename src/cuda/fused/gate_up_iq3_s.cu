#include "cuda/fused/gate_up_swiglu_kernel.cuh"
#include "formats/iq3_s.hpp"

namespace strata::cuda::fused {
template void launch_fused_gate_up<Iq3S>(const blocks::ProductArgs&, FusedTileKind, cudaStream_t);
}  // namespace strata::cuda::fused
