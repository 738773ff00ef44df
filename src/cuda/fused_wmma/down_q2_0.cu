#include "cuda/fused_wmma/launch_chain.cuh"
#include "formats/q2_0.hpp"

namespace strata::cuda::fused_wmma {
template void launch_chain<Q2_0, DownOp>(const blocks::ProductArgs&, cudaStream_t);
}  // namespace strata::cuda::fused_wmma
