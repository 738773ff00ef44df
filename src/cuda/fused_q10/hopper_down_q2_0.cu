#include "cuda/fused_q10/hopper_q10_kernel.cuh"
#include "formats/q2_0.hpp"

namespace strata::cuda::fused_q10 {
template void launch_hopper_q10_down<Q2_0>(const HopperQ10Args&, int, cudaStream_t);
}  // namespace strata::cuda::fused_q10
