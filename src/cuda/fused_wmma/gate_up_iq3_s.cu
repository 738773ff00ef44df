#include "cuda/fused_wmma/launch_chain.cuh"
#include "formats/iq3_s.hpp"

namespace strata::cuda::fused_wmma {
template void launch_chain<Iq3S, GateUpOp>(const blocks::ProductArgs&, cudaStream_t);
}  // namespace strata::cuda::fused_wmma
