// The q10 span bound as a compile-time shape, for host and device: what a kernel templated on a
// format may assume about one span's integer dot on fp16 tensor cores (../docs/cuda.md, "q10").
#pragma once
#include <cstdint>

#include "formats/format.hpp"

namespace strata::cuda::mma {

// A format (or a probe's stand-in) whose spans the fp16 tensor cores multiply exactly: S values of
// |w| <= W_f against |a| <= 511 keep every partial sum below 2^24 (wide_span_fits). WideBlockFormat
// implies it; it asks nothing of the decode, so tests can name a bound without a block layout.
template <class F>
concept ExactSpan = requires {
  F::kWideSpan;
  F::kWideMax;
  F::kBlockValues;
}
&&wide_span_fits<F>();

inline constexpr int kSpanStepValues =
    16;  // k per fp16 MMA step (m16n8k16, m64nNk16, wmma 16x16x16)

// One span seen by the tensor cores: kSteps chained k16 products from a fresh accumulator.
template <class F>
struct SpanShape {
  static_assert(
      ExactSpan<F>,
      "q10: a span of this format could exceed 2^24 (S * 511 * W_f >= 2^24, or S / W_f out of "
      "range): its integer dot is not exact on fp16 tensor cores");
  static constexpr int kValues = F::kWideSpan;              // S
  static constexpr int kSteps = kValues / kSpanStepValues;  // k16 steps per span
  static constexpr int kMaxWeight = F::kWideMax;            // W_f
  static constexpr int64_t kMaxPartial = int64_t{kValues} * kQ10MaxCode * kMaxWeight;  // < 2^24
  static_assert(kValues % kSpanStepValues == 0 && kSteps >= 1 && kSteps <= 4, "S in {16, 32, 64}");
};

}  // namespace strata::cuda::mma
