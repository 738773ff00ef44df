// The API edge's reading of the environment (api/backend.hpp says which variables and values).
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "api/backend.hpp"
#include "common/error.hpp"

namespace strata {
namespace {

// The variable's value, "" when unset; any value outside `allowed` throws naming the variable.
std::string read_env(const char* name, std::initializer_list<std::string_view> allowed) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return "";
  for (std::string_view a : allowed)
    if (value == a) return value;
  std::string known;
  for (std::string_view a : allowed) known += (known.empty() ? "" : " or ") + std::string(a);
  fail(Status::kInvalidArgument,
       fmt::format("{}: '{}' is not a value it takes ({}, or unset)", name, value, known));
}

bool is_fused(const std::optional<Arm>& arm) {
  return arm.has_value() && *arm != Arm::kProduction;
}

}  // namespace

EnvDefaults defaults_from_env() {
  EnvDefaults out;
  const std::string fused = read_env("STRATA_PF_FUSED", {"0", "1"});
  const std::string wmma = read_env("STRATA_PF_FUSED_WMMA", {"0", "1"});
  const std::string hopper = read_env("STRATA_PF_FUSED_HOPPER", {"0", "1"});
  const std::string q10_hopper = read_env("STRATA_PF_Q10_HOPPER", {"0", "1"});
  const std::string native = read_env("STRATA_PF_FUSED_NATIVE", {"0", "1"});
  const std::string numerics = read_env("STRATA_NUMERICS", {"q8", "q10"});
  if (fused == "1") out.arm = Arm::kFused;
  if (fused == "0") out.arm = Arm::kProduction;
  if (wmma == "1" && fused != "0") out.arm = Arm::kFusedWmma;
  if ((hopper == "0" || q10_hopper == "0") && out.arm == Arm::kFused) out.arm = Arm::kFusedSm80;
  if (q10_hopper == "0" && !out.arm) out.arm = Arm::kFusedSm80;
  if (native == "0" && is_fused(out.arm)) out.arm = Arm::kProduction;
  if (!numerics.empty()) out.numerics = parse_numerics(numerics);
  return out;
}

}  // namespace strata
