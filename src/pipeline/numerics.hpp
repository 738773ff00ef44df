// The numerics profiles: one arithmetic contract each, reproduced bit for bit by every backend
// and arm of the profile (docs/numerics.md).
#pragma once
#include <optional>
#include <string_view>

namespace strata {

enum class Numerics {
  kQ8,   // int8 codes per 32 values, fold per 32-wide slice (pipeline/arith.hpp)
  kQ10,  // int10 codes per 64 values, wide integer weights, fold per span (pipeline/arith_q10.hpp)
};

constexpr const char* numerics_name(Numerics n) { return n == Numerics::kQ10 ? "q10" : "q8"; }

// "q8" or "q10"; nullopt for anything else.
constexpr std::optional<Numerics> parse_numerics(std::string_view name) {
  if (name == "q8") return Numerics::kQ8;
  if (name == "q10") return Numerics::kQ10;
  return std::nullopt;
}

}  // namespace strata
