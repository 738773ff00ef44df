#include <cstdint>
#include <type_traits>

#include "cuda/common/check.hpp"
#include "cuda/pipeline/combine.hpp"
#include "pipeline/arith.hpp"

namespace strata::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kSlotsInFlight = 8;  // down rows loaded ahead of their fold

// Vec consecutive output columns per thread (float4 loads and stores where d % 4 == 0 and the rows
// are 16-byte aligned); CTA rows (blockIdx.y, strided) walk the tokens. Each column folds its k
// slots in slot order j = 0..k-1 with combine_step, the rows of kSlotsInFlight slots loaded first.
template <int Vec>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(const float* __restrict__ down,          // [P, d] f32
                   const int32_t* __restrict__ slot_to_pair, // [T*k]
                   const float* __restrict__ weights,       // [T, k] f32
                   int64_t n_tokens, int k, int64_t d,
                   float* __restrict__ y) {                 // [T, d] f32
  static_assert(Vec == 1 || Vec == 4, "one column or four per thread");
  using V = std::conditional_t<Vec == 4, float4, float>;
  const int64_t c = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * Vec;
  if (c >= d) return;
  for (int64_t t = blockIdx.y; t < n_tokens; t += gridDim.y) {
    float acc[Vec];
#pragma unroll
    for (int i = 0; i < Vec; ++i) acc[i] = 0.0f;
    for (int j0 = 0; j0 < k; j0 += kSlotsInFlight) {
      V rows[kSlotsInFlight];
      float w[kSlotsInFlight];
#pragma unroll
      for (int s = 0; s < kSlotsInFlight; ++s) {
        if (j0 + s >= k) break;
        const int64_t pair = slot_to_pair[t * k + j0 + s];
        w[s] = weights[t * k + j0 + s];
        rows[s] = *reinterpret_cast<const V*>(down + pair * d + c);
      }
#pragma unroll
      for (int s = 0; s < kSlotsInFlight; ++s) {
        if (j0 + s >= k) break;
        if constexpr (Vec == 4) {
          acc[0] = combine_step(acc[0], w[s], rows[s].x);
          acc[1] = combine_step(acc[1], w[s], rows[s].y);
          acc[2] = combine_step(acc[2], w[s], rows[s].z);
          acc[3] = combine_step(acc[3], w[s], rows[s].w);
        } else {
          acc[0] = combine_step(acc[0], w[s], rows[s]);
        }
      }
    }
    if constexpr (Vec == 4) *reinterpret_cast<float4*>(y + t * d + c) = make_float4(acc[0], acc[1], acc[2], acc[3]);
    else y[t * d + c] = acc[0];
  }
}

}  // namespace

void launch_combine(const float* down, const int32_t* slot_to_pair, const float* weights, int64_t n_tokens,
                    int k, int64_t d, float* y, cudaStream_t stream) {
  if (n_tokens == 0) return;
  const int64_t token_rows = n_tokens < 65535 ? n_tokens : 65535;
  const bool vec4 = d % 4 == 0 && reinterpret_cast<uintptr_t>(down) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  const int64_t threads_per_row = vec4 ? d / 4 : d;
  const dim3 grid(static_cast<unsigned>((threads_per_row + kThreads - 1) / kThreads), static_cast<unsigned>(token_rows));
  if (vec4) combine_kernel<4><<<grid, kThreads, 0, stream>>>(down, slot_to_pair, weights, n_tokens, k, d, y);
  else combine_kernel<1><<<grid, kThreads, 0, stream>>>(down, slot_to_pair, weights, n_tokens, k, d, y);
  STRATA_CUDA_CHECK_LAUNCH("combine_kernel");
}

}  // namespace strata::cuda
