#include "cuda/fused_q10/wmma_q10_launch.cuh"
#include "formats/q2_0.hpp"

namespace strata::cuda::fused_q10 {
template void launch_wmma_q10_down<Q2_0>(const WmmaQ10Args&, cudaStream_t);
}  // namespace strata::cuda::fused_q10
