#include "bench/cell.hpp"

#include <optional>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "common/error.hpp"
#include "formats/format.hpp"

namespace strata::bench {
namespace {

// GPU.md's cells; the layer counts are the models' MoE layer counts.
constexpr std::array<Preset, 4> kPresets = {{
    {"flash-next", 2560, 640, 512, 10, 48},
    {"qwen35-a3b", 2048, 512, 256, 8, 40},
    {"qwen3-30b", 2048, 768, 128, 8, 48},
    {"gpt-oss-120b", 2880, 2880, 128, 4, 36},
}};

std::string trim(std::string_view s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  auto begin = std::find_if(s.begin(), s.end(), not_space);
  auto end = std::find_if(s.rbegin(), s.rend(), not_space).base();
  return begin < end ? std::string(begin, end) : std::string();
}

}  // namespace

std::span<const Preset> presets() {
  return kPresets;
}

const Preset* find_preset(std::string_view name) {
  for (const Preset& p : kPresets)
    if (p.name == name) return &p;
  return nullptr;
}

std::string preset_names() {
  std::string names;
  for (const Preset& p : kPresets) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

std::string_view routing_name(RoutingKind routing) {
  return routing == RoutingKind::kUniform ? "uniform" : "skewed";
}

std::vector<ArmChoice> parse_arms(std::string_view csv) {
  std::vector<ArmChoice> arms;
  size_t start = 0;
  while (start <= csv.size()) {
    const size_t comma = std::min(csv.find(',', start), csv.size());
    const std::string name = trim(csv.substr(start, comma - start));
    const std::optional<Arm> arm = parse_arm(name);
    require(arm.has_value(), Status::kInvalidArgument,
            fmt::format("--arms: unknown arm '{}' (known: {})", name, arm_names()));
    arms.push_back({name, *arm});
    start = comma + 1;
  }
  require(arms.size() == 2, Status::kInvalidArgument,
          fmt::format("--arms: '{}' names {} arm(s); give exactly two, A,B", csv, arms.size()));
  return arms;
}

bool arms_claim_bitwise(Arm, Arm) {
  return true;
}

bool arms_claim_bitwise(const ArmChoice& a, const ArmChoice& b) {
  return a.numerics == b.numerics && arms_claim_bitwise(a.arm, b.arm);
}

void apply_numerics(std::vector<ArmChoice>& arms, std::string_view csv) {
  std::vector<Numerics> profiles;
  size_t start = 0;
  while (start <= csv.size()) {
    const size_t comma = std::min(csv.find(',', start), csv.size());
    const std::string name = trim(csv.substr(start, comma - start));
    const std::optional<Numerics> n = parse_numerics(name);
    require(n.has_value(), Status::kInvalidArgument,
            fmt::format("--numerics: unknown profile '{}' (q8 or q10)", name));
    profiles.push_back(*n);
    start = comma + 1;
  }
  require(profiles.size() == 1 || profiles.size() == 2, Status::kInvalidArgument,
          fmt::format("--numerics: '{}' names {} profiles; give one (both arms) or two, A,B", csv,
                      profiles.size()));
  for (size_t a = 0; a < arms.size(); ++a)
    arms[a].numerics = profiles[std::min(a, profiles.size() - 1)];
  const bool label = profiles.size() == 2 || profiles[0] != Numerics::kQ8;
  if (label)
    for (ArmChoice& arm : arms) arm.name += std::string("/") + numerics_name(arm.numerics);
}

std::string CellSpec::geometry_label() const {
  const std::string dims = fmt::format("d={} f={} E={} k={}", d, f, n_expert, k);
  return preset.empty() ? dims : fmt::format("{} ({})", preset, dims);
}

void check_geometry(const std::string& geometry_label, int64_t d, int64_t f, GgmlType gate_up,
                    GgmlType down) {
  require(d > 0 && f > 0, Status::kInvalidArgument,
          fmt::format("geometry {}: d and f must be positive", geometry_label));
  const auto gate_info = ggml_type_info(static_cast<uint32_t>(gate_up));
  const auto down_info = ggml_type_info(static_cast<uint32_t>(down));
  require(gate_info && down_info, Status::kInvalidArgument,
          fmt::format("geometry {}: unknown format", geometry_label));
  require(
      d % gate_info->block_values == 0, Status::kInvalidArgument,
      fmt::format("geometry {}: gate/up format {} packs {} values per block, and d = {} is not a "
                  "multiple of {} (its rows cannot be tiled); pick another --gate-up format",
                  geometry_label, gate_info->name, gate_info->block_values, d,
                  gate_info->block_values));
  require(f % down_info->block_values == 0, Status::kInvalidArgument,
          fmt::format("geometry {}: down format {} packs {} values per block, and f = {} is not a "
                      "multiple of {} (its rows cannot be tiled); pick another --down format",
                      geometry_label, down_info->name, down_info->block_values, f,
                      down_info->block_values));
  require(d % kSubBlockValues == 0 && f % kSubBlockValues == 0, Status::kInvalidArgument,
          fmt::format(
              "geometry {}: d and f must be multiples of {} (the activation quantisation block)",
              geometry_label, kSubBlockValues));
}

double ggml_h200_layer_us(const CellSpec& c) {
  if (c.gate_up_type != GgmlType::IQ3_S || c.down_type != GgmlType::Q2_0) return 0;
  if (c.routing != RoutingKind::kUniform || c.source != "random") return 0;
  const int64_t T = c.chunk;
  if (c.preset == "qwen35-a3b") return T == 512 ? 1330 : T == 4096 ? 3621 : T == 16384 ? 12680 : 0;
  if (c.preset == "qwen3-30b") return T == 4096 ? 3453 : 0;
  if (c.preset == "flash-next") return T == 512 ? 4393 : T == 4096 ? 10990 : T == 16384 ? 48855 : 0;
  return 0;  // also "... (modified)": another geometry than the figure's
}

double layer_ops(int64_t tokens, int k, int64_t d, int64_t f) {
  return 2.0 * static_cast<double>(tokens) * k * 3.0 * static_cast<double>(d) *
         static_cast<double>(f);
}

}  // namespace strata::bench
