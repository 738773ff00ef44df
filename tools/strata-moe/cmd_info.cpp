// `strata-moe info FILE.gguf [--json] [--keys] [--no-tensors]`: an inspector. Never refuses a
// valid GGUF: every tensor and key, and per layer the block kind, its routing and extras, and
// which backends and arms run it -- or why not (the same checks `run` makes).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/backend.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/text.hpp"
#include "gguf/block_plan.hpp"

namespace strata::cli {

namespace {

struct InfoOptions {
  std::string path;
  bool json = false;
  bool keys = false;
  bool no_tensors = false;
};

// Arrays longer than this show their first values and their length.
constexpr size_t kArrayHead = 8;

std::string human_bytes(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", bytes / double(1 << 30));
  if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.2f} MiB", bytes / double(1 << 20));
  if (bytes >= (uint64_t{1} << 10)) return fmt::format("{:.1f} KiB", bytes / double(1 << 10));
  return fmt::format("{} B", bytes);
}

nlohmann::json value_json(const gguf::MetaValue& v) {
  switch (v.value.index()) {
    case 0:
      return std::get<uint64_t>(v.value);
    case 1:
      return std::get<int64_t>(v.value);
    case 2:
      return std::get<double>(v.value);
    case 3:
      return std::get<bool>(v.value);
    case 4:
      return std::get<std::string>(v.value);
    default: {
      const auto& a = std::get<gguf::MetaArray>(v.value);
      nlohmann::json head = nlohmann::json::array();
      for (size_t i = 0; i < a.values.size() && i < kArrayHead; ++i)
        head.push_back(value_json(a.values[i]));
      return {{"element_type", std::string(gguf::value_type_name(a.element_type))},
              {"count", a.values.size()},
              {"head", head}};
    }
  }
}

std::string value_text(const gguf::MetaValue& v) {
  if (v.value.index() == 4) return fmt::format("\"{}\"", std::get<std::string>(v.value));
  if (v.value.index() == 5) {
    const auto& a = std::get<gguf::MetaArray>(v.value);
    std::vector<std::string> head;
    for (size_t i = 0; i < a.values.size() && i < kArrayHead; ++i)
      head.push_back(value_text(a.values[i]));
    return fmt::format("[{}{}] ({} x {})", fmt::join(head, ", "),
                       a.values.size() > kArrayHead ? ", ..." : "", a.values.size(),
                       std::string(gguf::value_type_name(a.element_type)));
  }
  return value_json(v).dump();
}

const char* kind_name(gguf::BlockKind kind) {
  return kind == gguf::BlockKind::kMoe ? "moe" : kind == gguf::BlockKind::kDense ? "dense" : "ffn?";
}

std::string shape_text(const std::vector<int64_t>& ne) {
  return fmt::format("[{}]", fmt::join(ne, ", "));
}

// The arms of one profile, from the arm registry (the plan's lists): "q8: production, fused".
std::string profile_text(const char* profile, const std::vector<std::string>& arms) {
  return fmt::format("{}: {}", profile, arms.empty() ? std::string("none") : fmt::format("{}", fmt::join(arms, ", ")));
}

// Where a layer runs: "q8: production, fused; q10: production, fused" or "cannot run: <reason>".
std::string cpu_text(const gguf::BlockPlan& p) {
  if (p.kind == gguf::BlockKind::kDense) return "skipped: a dense FFN layer, not an MoE block";
  if (!p.cpu.empty()) return "cannot run: " + p.cpu;
  return profile_text("q8", p.cpu_q8) + "; " + profile_text("q10", p.cpu_q10);
}
std::string cuda_text(const gguf::BlockPlan& p) {
  if (p.kind == gguf::BlockKind::kDense || !p.cpu.empty()) return "-";
  if (!p.cuda.empty()) return "cannot run: " + p.cuda;
  return fmt::format("{}; {}{}", profile_text("q8", p.cuda_q8), profile_text("q10", p.cuda_q10),
                     cuda_device_count() > 0 ? "" : " (no CUDA device visible)");
}

// The default profile of a run naming none: q10 where the backend has a q10 arm, else q8.
const char* default_profile(const std::vector<std::string>& q8, const std::vector<std::string>& q10) {
  return !q10.empty() ? "q10" : !q8.empty() ? "q8" : "";
}

// Union of two lists of arm names, first-seen order.
std::vector<std::string> all_arms(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out = a;
  for (const std::string& x : b)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

nlohmann::json split_json(const gguf::SplitInfo& s) {
  if (!s.is_split) return nullptr;
  nlohmann::json shards = nlohmann::json::array();
  for (size_t i = 0; i < s.shards.size(); ++i)
    shards.push_back({{"path", s.shards[i].string()}, {"present", bool(s.present[i])}});
  return {{"index", s.index}, {"count", s.count}, {"shards", shards}};
}

void print_json(const gguf::Model& model, const std::vector<gguf::BlockPlan>& plans,
                const InfoOptions& opt) {
  const gguf::File& file = model.named();
  nlohmann::json out;
  out["file"] = file.path();
  out["architecture"] = model.architecture();
  out["version"] = file.version();
  out["alignment"] = file.alignment();
  out["split"] = split_json(model.split());
  nlohmann::json keys = nlohmann::json::object();
  for (const auto& [key, value] : file.metadata()) keys[key] = value_json(value);
  out["metadata"] = keys;
  out["tensor_count"] = file.tensors().size();
  if (!opt.no_tensors) {
    nlohmann::json tensors = nlohmann::json::array();
    for (const auto& f : model.files())
      for (const gguf::TensorInfo& t : f->tensors())
        tensors.push_back({{"name", t.name},
                           {"type", std::string(ggml_type_name(t.type))},
                           {"shape", t.ne},
                           {"bytes", t.bytes},
                           {"file", f->path()}});
    out["tensors"] = tensors;
  }
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& p : plans) {
    layers.push_back(
        {{"layer", p.layer},
         {"kind", kind_name(p.kind)},
         {"d", p.d},
         {"ffn", p.f},
         {"n_expert", p.n_expert},
         {"n_expert_used", p.k},
         {"gate", p.gate_type},
         {"up", p.up_type},
         {"down", p.down_type},
         {"bytes", p.bytes},
         {"merged_gate_up", p.merged_gate_up},
         {"per_expert_tensors", p.per_expert_tensors},
         {"routing", p.routing},
         {"extras", p.extras},
         {"cpu",
          {{"runs", p.kind == gguf::BlockKind::kMoe && p.cpu.empty()},
           {"arms", all_arms(p.cpu_q8, p.cpu_q10)},
           {"profiles", {{"q8", p.cpu_q8}, {"q10", p.cpu_q10}}},
           {"default_profile", default_profile(p.cpu_q8, p.cpu_q10)},
           {"text", cpu_text(p)}}},
         {"cuda",
          {{"runs", p.cpu.empty() && p.cuda.empty()},
           {"arms", all_arms(p.cuda_q8, p.cuda_q10)},
           {"profiles", {{"q8", p.cuda_q8}, {"q10", p.cuda_q10}}},
           {"default_profile", default_profile(p.cuda_q8, p.cuda_q10)},
           {"text", cuda_text(p)}}}});
  }
  out["layers"] = layers;
  // Names from the file need not be UTF-8: invalid bytes become U+FFFD instead of an exception.
  std::fputs((out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(),
             stdout);
}

void print_text(const gguf::Model& model, const std::vector<gguf::BlockPlan>& plans,
                const InfoOptions& opt) {
  const gguf::File& file = model.named();
  const std::string arch = model.architecture();
  // Control characters in the path or in names from the file must not reach the terminal.
  fmt::print("file          {}\n", printable(file.path()));
  fmt::print("architecture  {}\n", arch.empty() ? "(none)" : printable(arch));
  fmt::print("version       {}\n", file.version());
  fmt::print("alignment     {}\n", file.alignment());
  const gguf::SplitInfo& split = model.split();
  if (split.is_split) {
    fmt::print("split         shard {} of {}\n", split.index + 1, split.count);
    for (size_t i = 0; i < split.shards.size(); ++i)
      fmt::print("  shard {:>3}   {} ({})\n", i + 1, printable(split.shards[i].string()),
                 split.present[i] ? "found" : "missing");
    if (split.shards.empty())
      fmt::print("  (the file name is not <prefix>-NNNNN-of-MMMMM.gguf: shards not looked for)\n");
    if (split.index > 0 && arch.empty())
      fmt::print("  (architecture and hyperparameters are in the first shard)\n");
  }
  uint64_t tensor_bytes = 0;
  for (const auto& t : file.tensors()) tensor_bytes += t.bytes;
  fmt::print("tensors       {} ({})\n", file.tensors().size(), human_bytes(tensor_bytes));
  fmt::print("metadata keys {}\n", file.metadata().size());
  size_t moe = 0;
  std::vector<int> dense;
  for (const auto& p : plans) {
    if (p.kind == gguf::BlockKind::kMoe) ++moe;
    if (p.kind == gguf::BlockKind::kDense) dense.push_back(p.layer);
  }
  fmt::print("MoE layers    {}\n", moe);
  if (!dense.empty()) fmt::print("dense layers  {} (skipped by run)\n", fmt::join(dense, ", "));

  if (!plans.empty()) {
    fmt::print("\n{:>5} {:<5} {:>6} {:>6} {:>8} {:>5}  {:<8} {:<8} {:<8} {:>12}\n", "layer", "kind",
               "d", "ffn", "n_expert", "used", "gate", "up", "down", "bytes");
    uint64_t total = 0;
    for (const auto& p : plans) {
      fmt::print("{:>5} {:<5} {:>6} {:>6} {:>8} {:>5}  {:<8} {:<8} {:<8} {:>12}\n", p.layer,
                 kind_name(p.kind), p.d, p.f, p.n_expert, p.k, p.gate_type, p.up_type, p.down_type,
                 p.bytes);
      if (!p.routing.empty()) fmt::print("      routing  {}\n", p.routing);
      std::vector<std::string> extras = p.extras;
      if (p.merged_gate_up) extras.insert(extras.begin(), "merged gate_up");
      if (p.per_expert_tensors) extras.insert(extras.begin(), "per-expert tensors");
      if (!extras.empty()) fmt::print("      extras   {}\n", fmt::join(extras, "; "));
      fmt::print("      cpu      {}\n", cpu_text(p));
      if (p.kind == gguf::BlockKind::kMoe) fmt::print("      cuda     {}\n", cuda_text(p));
      total += p.bytes;
    }
    fmt::print("\nexpert weights: {} bytes ({})\n", total, human_bytes(total));
  }

  if (opt.keys) {
    fmt::print("\n{:<44} {:<7} {}\n", "key", "type", "value");
    for (const auto& [key, value] : file.metadata())
      fmt::print("{:<44} {:<7} {}\n", printable(key), std::string(gguf::value_type_name(value.type)),
                 printable(value_text(value)));
  }
  if (!opt.no_tensors) {
    fmt::print("\n{:<44} {:<8} {:<22} {:>12}\n", "tensor", "type", "shape", "bytes");
    for (const gguf::TensorInfo& t : file.tensors())
      fmt::print("{:<44} {:<8} {:<22} {:>12}\n", printable(t.name), ggml_type_name(t.type), shape_text(t.ne),
                 t.bytes);
  }
}

}  // namespace

Runner add_info_command(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* sub = app.add_subcommand("info", "Inspect a GGUF file: keys, tensors, MoE blocks");
  sub->add_option("file", options->path, "GGUF model file")->required();
  sub->add_flag("--json", options->json, "Print JSON instead of a table");
  sub->add_flag("--keys", options->keys, "List every metadata key and value");
  sub->add_flag("--no-tensors", options->no_tensors, "Leave out the tensor list");
  return [options]() -> int {
    const gguf::Model model = gguf::Model::open(options->path);
    const auto plans = gguf::plan_blocks(model);
    if (options->json)
      print_json(model, plans, *options);
    else
      print_text(model, plans, *options);
    return 0;
  };
}

}  // namespace strata::cli
