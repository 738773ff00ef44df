#include "cuda/fused_q10/hopper_q10_kernel.cuh"
#include "formats/iq3_s.hpp"

namespace strata::cuda::fused_q10 {
template void launch_hopper_q10_gate_up<Iq3S>(const HopperQ10Args&, int, cudaStream_t);
}  // namespace strata::cuda::fused_q10
