// `strata-moe support [--json]`: what this build can run -- every arm of every backend (its formats
// and geometry limits) and, per block format and profile, which backends and arms carry it as
// gate/up and as down. Printed from the arm registry (pipeline/arm_registry.hpp), the data every
// dispatcher chooses from, so it cannot drift from what runs.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "api/backend.hpp"
#include "commands.hpp"
#include "formats/registry.hpp"
#include "pipeline/arm_registry.hpp"

namespace strata::cli {
namespace {

struct SupportOptions {
  bool json = false;
};

bool carries(const std::vector<GgmlType>& list, GgmlType t) {
  for (GgmlType x : list)
    if (x == t) return true;
  return false;
}

std::vector<const ArmSpec*> all_arms() {
  std::vector<const ArmSpec*> out;
  for (Backend b : {Backend::kCpu, Backend::kCuda})
    for (const ArmSpec& s : arm_specs(b)) out.push_back(&s);
  return out;
}

std::vector<std::string> type_names(const std::vector<GgmlType>& list) {
  std::vector<std::string> out;
  for (GgmlType t : list) out.emplace_back(ggml_type_name(t));
  return out;
}

// One arm's limits for a format in a role: the arm's multiples, and the format's block size on the
// rows it is in (gate/up rows hold d values, down rows f values).
struct Limits {
  int64_t d = 0, f = 0;
};
Limits limits_of(const ArmSpec& s, const FormatInfo& format, bool gate_up) {
  Limits l;
  l.d = std::lcm<int64_t>(s.d_multiple, gate_up ? format.block_values : 1);
  l.f = std::lcm<int64_t>(s.f_multiple, gate_up ? 1 : format.block_values);
  return l;
}

std::string limits_text(const ArmSpec& s, const Limits& l) {
  std::string text = fmt::format("d % {}, f % {}", l.d, l.f);
  if (s.gate_up_same) text += ", gate = up";
  if (s.needs_sm90a) text += ", sm_90a";
  return text;
}

nlohmann::json to_json() {
  nlohmann::json doc;
  const DeviceCaps caps = cuda_device_caps();
  doc["build"] = {{"cuda", !arm_specs(Backend::kCuda).empty()},
                  {"cuda_devices", cuda_device_count()},
                  {"sm90a", caps.sm90a}};
  nlohmann::json arms = nlohmann::json::array();
  for (const ArmSpec* s : all_arms())
    arms.push_back({{"backend", backend_name(s->backend)},
                    {"arm", arm_name(s->arm)},
                    {"profile", numerics_name(s->numerics)},
                    {"gate_up", type_names(s->gate_up)},
                    {"down", type_names(s->down)},
                    {"gate_up_same_format", s->gate_up_same},
                    {"d_multiple", s->d_multiple},
                    {"f_multiple", s->f_multiple},
                    {"needs_sm90a", s->needs_sm90a}});
  doc["arms"] = arms;
  nlohmann::json formats = nlohmann::json::array();
  for (const FormatInfo& format : block_formats()) {
    nlohmann::json profiles = nlohmann::json::object();
    for (Numerics n : {Numerics::kQ8, Numerics::kQ10}) {
      nlohmann::json roles = nlohmann::json::object();
      for (bool gate_up : {true, false}) {
        nlohmann::json carriers = nlohmann::json::array();
        for (const ArmSpec* s : all_arms()) {
          if (s->numerics != n || !carries(gate_up ? s->gate_up : s->down, format.type)) continue;
          const Limits l = limits_of(*s, format, gate_up);
          carriers.push_back({{"backend", backend_name(s->backend)},
                              {"arm", arm_name(s->arm)},
                              {"d_multiple", l.d},
                              {"f_multiple", l.f},
                              {"gate_up_same_format", s->gate_up_same},
                              {"needs_sm90a", s->needs_sm90a}});
        }
        roles[gate_up ? "gate_up" : "down"] = carriers;
      }
      profiles[numerics_name(n)] = roles;
    }
    formats.push_back({{"format", std::string(format.name)},
                       {"ggml_type", static_cast<int>(format.type)},
                       {"block_values", format.block_values},
                       {"profiles", profiles}});
  }
  doc["formats"] = formats;
  return doc;
}

// "cpu: production, fused; cuda: fused-sm80 (d % 256, f % 64, gate = up), ..." or "-".
std::string carriers_text(const FormatInfo& format, Numerics n, bool gate_up) {
  std::vector<std::string> parts;
  for (Backend b : {Backend::kCpu, Backend::kCuda}) {
    std::vector<std::string> names;
    for (const ArmSpec& s : arm_specs(b)) {
      if (s.numerics != n || !carries(gate_up ? s.gate_up : s.down, format.type)) continue;
      names.push_back(
          fmt::format("{} ({})", arm_name(s.arm), limits_text(s, limits_of(s, format, gate_up))));
    }
    if (!names.empty())
      parts.push_back(fmt::format("{}: {}", backend_name(b), fmt::join(names, ", ")));
  }
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, "; "));
}

void print_text() {
  const DeviceCaps caps = cuda_device_caps();
  const bool cuda = !arm_specs(Backend::kCuda).empty();
  fmt::print("build         cpu{}\n", cuda ? ", cuda" : " (built without CUDA)");
  if (cuda)
    fmt::print("cuda devices  {}{}\n", cuda_device_count(),
               caps.sm90a ? " (the sm_90a kernels run here)" : " (no sm_90a kernels here)");
  fmt::print("\n{:<5} {:<13} {:<8} {:<10} {:<10} {}\n", "back", "arm", "profile", "gate/up", "down",
             "limits");
  for (const ArmSpec* s : all_arms()) {
    const auto list = [](const std::vector<GgmlType>& l) {
      return l.size() == block_formats().size() ? std::string("all")
                                                : fmt::format("{}", fmt::join(type_names(l), ","));
    };
    std::string limits = fmt::format("d % {}, f % {}", s->d_multiple, s->f_multiple);
    if (s->gate_up_same) limits += ", gate = up";
    if (s->needs_sm90a) limits += ", sm_90a";
    fmt::print("{:<5} {:<13} {:<8} {:<10} {:<10} {}\n", backend_name(s->backend), arm_name(s->arm),
               numerics_name(s->numerics), list(s->gate_up), list(s->down), limits);
  }
  fmt::print(
      "\n(every format's own block size divides the rows it is in: gate/up rows hold d values, "
      "down rows f values)\n");
  for (const FormatInfo& format : block_formats()) {
    fmt::print("\n{} (block of {})\n", format.name, format.block_values);
    for (Numerics n : {Numerics::kQ8, Numerics::kQ10}) {
      fmt::print("  {:<4} gate/up  {}\n", numerics_name(n), carriers_text(format, n, true));
      fmt::print("  {:<4} down     {}\n", numerics_name(n), carriers_text(format, n, false));
    }
  }
}

}  // namespace

Runner add_support_command(CLI::App& app) {
  auto options = std::make_shared<SupportOptions>();
  CLI::App* sub = app.add_subcommand(
      "support",
      "What this build runs: per format and profile, the backends and arms and their limits");
  sub->add_flag("--json", options->json, "Print JSON instead of text");
  return [options]() -> int {
    if (options->json)
      std::fputs((to_json().dump(2) + "\n").c_str(), stdout);
    else
      print_text();
    return 0;
  };
}

}  // namespace strata::cli
