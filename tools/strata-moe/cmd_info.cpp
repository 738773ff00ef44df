// `strata-moe info FILE.gguf [--json]`: the file's architecture and its MoE layers.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "common/error.hpp"
#include "common/text.hpp"
#include "gguf/gguf.hpp"

namespace strata::cli {

namespace {

struct InfoOptions {
  std::string path;
  bool json = false;
};

// Format names as the test vectors' manifests spell them, all lower case ("q2_k", "iq3_s").
std::string format_name(GgmlType type) {
  std::string name(ggml_type_name(type));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

std::string human_bytes(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", bytes / double(1 << 30));
  if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.2f} MiB", bytes / double(1 << 20));
  if (bytes >= (uint64_t{1} << 10)) return fmt::format("{:.1f} KiB", bytes / double(1 << 10));
  return fmt::format("{} B", bytes);
}

void print_json(const gguf::File& file, const std::vector<gguf::MoeLayerInfo>& layers) {
  nlohmann::json out;
  out["architecture"] = file.architecture();
  out["moe_layers"] = nlohmann::json::array();
  for (const auto& l : layers) {
    out["moe_layers"].push_back({{"layer", l.layer},
                                 {"d", l.weights.d},
                                 {"ffn", l.weights.f},
                                 {"n_expert", l.weights.n_expert},
                                 {"n_expert_used", l.n_expert_used},
                                 {"gate", format_name(l.weights.gate.type)},
                                 {"up", format_name(l.weights.up.type)},
                                 {"down", format_name(l.weights.down.type)},
                                 {"bytes", l.bytes}});
  }
  // Names from the file need not be UTF-8: invalid bytes become U+FFFD instead of an exception.
  std::fputs((out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(),
             stdout);
}

void print_text(const gguf::File& file, const std::vector<gguf::MoeLayerInfo>& layers) {
  const std::string arch = file.architecture();
  // Control characters in the path or the architecture name must not reach the terminal.
  fmt::print("file          {}\n", printable(file.path()));
  fmt::print("architecture  {}\n", arch.empty() ? "(none)" : printable(arch));
  fmt::print("version       {}\n", file.version());
  fmt::print("alignment     {}\n", file.alignment());
  fmt::print("tensors       {}\n", file.tensors().size());
  fmt::print("metadata keys {}\n", file.metadata().size());
  fmt::print("MoE layers    {}\n", layers.size());
  if (layers.empty()) return;
  fmt::print("\n{:>5} {:>6} {:>6} {:>8} {:>5}  {:<8} {:<8} {:<8} {:>12}  {}\n", "layer", "d", "ffn",
             "n_expert", "used", "gate", "up", "down", "bytes", "notes");
  uint64_t total = 0;
  for (const auto& l : layers) {
    std::string notes;
    if (l.merged_gate_up) notes += "merged gate_up; ";
    if (l.router == nullptr) notes += "no router; ";
    if (l.shared_gate != nullptr)
      notes += fmt::format("shared expert ffn {}; ", l.shared_gate->ne[1]);
    if (!notes.empty()) notes.resize(notes.size() - 2);
    std::string line = fmt::format(
        "{:>5} {:>6} {:>6} {:>8} {:>5}  {:<8} {:<8} {:<8} {:>12}  {}", l.layer, l.weights.d,
        l.weights.f, l.weights.n_expert, l.n_expert_used, format_name(l.weights.gate.type),
        format_name(l.weights.up.type), format_name(l.weights.down.type), l.bytes, notes);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print("{}\n", line);
    total += l.bytes;
  }
  fmt::print("\nexpert weights: {} bytes ({})\n", total, human_bytes(total));
}

}  // namespace

Runner add_info_command(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* sub = app.add_subcommand("info", "Describe a GGUF file and its MoE layers");
  sub->add_option("file", options->path, "GGUF model file")->required();
  sub->add_flag("--json", options->json, "Print JSON instead of a table");
  return [options]() -> int {
    const gguf::File file = gguf::File::open(options->path);
    const auto layers = gguf::discover_moe_layers(file);
    if (options->json)
      print_json(file, layers);
    else
      print_text(file, layers);
    return 0;
  };
}

}  // namespace strata::cli
