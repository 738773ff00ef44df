#include "cuda/common/check.hpp"
#include "cuda/pipeline/combine.hpp"
#include "pipeline/arith.hpp"

namespace strata::cuda {
namespace {

// One thread per output column; CTA rows (blockIdx.y, strided) walk the tokens.
__global__ void combine_kernel(const float* __restrict__ down,          // [P, d] f32
                               const int32_t* __restrict__ slot_to_pair, // [T*k]
                               const float* __restrict__ weights,       // [T, k] f32
                               int64_t n_tokens, int k, int64_t d,
                               float* __restrict__ y) {                 // [T, d] f32
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= d) return;
  for (int64_t t = blockIdx.y; t < n_tokens; t += gridDim.y) {
    float acc = 0.0f;
    for (int j = 0; j < k; ++j) {
      const int64_t pair = slot_to_pair[t * k + j];
      acc = combine_step(acc, weights[t * k + j], down[pair * d + c]);
    }
    y[t * d + c] = acc;
  }
}

}  // namespace

void launch_combine(const float* down, const int32_t* slot_to_pair, const float* weights, int64_t n_tokens,
                    int k, int64_t d, float* y, cudaStream_t stream) {
  if (n_tokens == 0) return;
  constexpr int kThreads = 256;
  const int64_t token_rows = n_tokens < 65535 ? n_tokens : 65535;
  const dim3 grid(static_cast<unsigned>((d + kThreads - 1) / kThreads), static_cast<unsigned>(token_rows));
  combine_kernel<<<grid, kThreads, 0, stream>>>(down, slot_to_pair, weights, n_tokens, k, d, y);
  STRATA_CUDA_CHECK_LAUNCH("combine_kernel");
}

}  // namespace strata::cuda
