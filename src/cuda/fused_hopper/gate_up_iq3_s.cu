#include "cuda/fused_hopper/hopper_kernel.cuh"
#include "formats/iq3_s.hpp"

namespace strata::cuda::fused_hopper {
template void launch_hopper_gate_up<Iq3S>(const ProductArgs&, HopperTileKind, cudaStream_t);
}  // namespace strata::cuda::fused_hopper
