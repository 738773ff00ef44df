#include "cuda/fused_q10/wmma_q10_launch.cuh"
#include "formats/iq3_s.hpp"

namespace strata::cuda::fused_q10 {
template void launch_wmma_q10_gate_up<Iq3S>(const WmmaQ10Args&, cudaStream_t);
}  // namespace strata::cuda::fused_q10
