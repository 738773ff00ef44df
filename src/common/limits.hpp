// Documented limits on sizes that come from options, files and API arguments (README.md and
// docs/cli.md list them). Each is far above any real model and low enough that every product
// of sizes below them fits 64 bits, so a forged or mistyped size is refused with a message
// before it can overflow a byte count or size an allocation.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <string_view>

#include "common/error.hpp"

namespace strata::limits {

inline constexpr int kMaxThreads = 1024;                  // --threads, RunOptions::threads
inline constexpr int64_t kMaxWidth = int64_t{1} << 20;    // d and f
inline constexpr int64_t kMaxExperts = int64_t{1} << 20;  // E (expert ids are int32)
inline constexpr int kMaxExpertsPerToken = 64;            // k
inline constexpr int64_t kMaxTokens = int64_t{1} << 28;   // T of one call
// Routed pairs T * k are indexed with int32 in the grouping.
inline constexpr int64_t kMaxPairs = (int64_t{1} << 31) - 1;
// T * d values of x and y: 64 GiB of f32 each.
inline constexpr int64_t kMaxActivationValues = int64_t{1} << 34;
// Bytes of one synthetic (demo, bench) layer's expert tensors, and of all of a bench run's sets.
inline constexpr uint64_t kMaxSyntheticWeightBytes = uint64_t{1} << 40;

// Throws Error(kInvalidArgument) "<what>: <value> is outside [lo, hi]".
inline void require_in_range(std::string_view what, int64_t value, int64_t lo, int64_t hi) {
  require(value >= lo && value <= hi, Status::kInvalidArgument,
          fmt::format("{}: {} is outside [{}, {}]", what, value, lo, hi));
}

// a * b, or Error(kInvalidArgument) naming `what` when it overflows or exceeds `max`.
inline int64_t checked_product(std::string_view what, int64_t a, int64_t b, int64_t max) {
  int64_t product = 0;
  require(a >= 0 && b >= 0 && !__builtin_mul_overflow(a, b, &product) && product <= max,
          Status::kInvalidArgument,
          fmt::format("{}: {} x {} is more than the limit {}", what, a, b, max));
  return product;
}

}  // namespace strata::limits
