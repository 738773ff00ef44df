// Compiled by CTest, never linked: a kernel templated on a format multiplies one span on the fp16
// tensor cores through SpanMma<F>. With STRATA_SPAN_GUARD_TOO_WIDE the format's span could reach
// 2^24 (64 * 511 * 1024 = 33,488,896) and the build must stop at SpanShape's static_assert;
// without it, real formats of each span width (64, 32, 16) must compile.
#include "cuda/mma/span_mma.cuh"
#include "formats/iq3_s.hpp"
#include "formats/q4_k.hpp"
#include "formats/q6_k.hpp"

namespace span_guard {

struct TooWide {
  static constexpr int kWideSpan = 64;
  static constexpr int kBlockValues = 256;
  static constexpr int kWideMax = 1024;
};

template <class F>
__global__ void span_kernel(const uint32_t* a /*[32 x 4]*/, const uint32_t* b /*[32 x 2]*/,
                            float* d /*[32 x 4]*/) {
  using Span = strata::cuda::mma::SpanMma<F>;
  const int lane = threadIdx.x;
  const uint32_t af[4] = {a[4 * lane], a[4 * lane + 1], a[4 * lane + 2], a[4 * lane + 3]};
  const uint32_t bf[2] = {b[2 * lane], b[2 * lane + 1]};
  float acc[4];
#pragma unroll
  for (int step = 0; step < Span::kSteps; ++step) Span::step_m16n8k16(acc, af, bf, step);
  for (int c = 0; c < 4; ++c) d[4 * lane + c] = acc[c];
}

}  // namespace span_guard

#ifdef STRATA_SPAN_GUARD_TOO_WIDE
template __global__ void span_guard::span_kernel<span_guard::TooWide>(const uint32_t*,
                                                                      const uint32_t*, float*);
#else
template __global__ void span_guard::span_kernel<strata::Iq3S>(const uint32_t*, const uint32_t*,
                                                               float*);
template __global__ void span_guard::span_kernel<strata::Q4_K>(const uint32_t*, const uint32_t*,
                                                               float*);
template __global__ void span_guard::span_kernel<strata::Q6_K>(const uint32_t*, const uint32_t*,
                                                               float*);
static_assert(!strata::cuda::mma::ExactSpan<span_guard::TooWide>);
#endif
