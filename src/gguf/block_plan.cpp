// MoE blocks of GGUF models per architecture: the tensors and keys llama.cpp's graph reads for
// each supported architecture, checked, and turned into a MoeBlock -- or refused by name.
#include "gguf/block_plan.hpp"

#include "common/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <regex>
#include <set>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "formats/registry.hpp"
#include "pipeline/arm_registry.hpp"

namespace strata::gguf {
namespace {

// ---- what each architecture's FFN block is (llama.cpp's src/models/<arch>.cpp) ---------------
enum class SharedRule { kNone, kUnscaled, kGated, kGatedRequired };

struct ArchRules {
  std::string_view name;
  ScoreFunc score;  // gating when {arch}.expert_gating_func is absent or 0
  bool gating_key;  // the graph reads expert_gating_func
  bool normalize;   // weight normalisation when expert_weights_norm is absent
  bool norm_key;    // the graph reads expert_weights_norm
  ActivationKind activation;
  SharedRule shared;
  bool biases;          // router and per-expert biases (gpt-oss)
  bool selection_bias;  // exp_probs_b (DeepSeek V3, GLM-4.5)
  bool dense_lead;      // leading_dense_block_count
  bool per_expert;      // per-expert tensors blk.N.ffn_gate.E.weight (old mixtral files)
};

constexpr ArchRules kArchs[] = {
    {"qwen3moe", ScoreFunc::kSoftmax, false, true, false, ActivationKind::kSwiGLU,
     SharedRule::kNone, false, false, false, false},
    {"qwen3next", ScoreFunc::kSoftmax, false, true, false, ActivationKind::kSwiGLU,
     SharedRule::kGated, false, false, false, false},
    {"qwen35moe", ScoreFunc::kSoftmax, false, true, false, ActivationKind::kSwiGLU,
     SharedRule::kGatedRequired, false, false, false, false},
    {"deepseek2", ScoreFunc::kSoftmax, true, false, true, ActivationKind::kSwiGLU,
     SharedRule::kUnscaled, false, true, true, false},
    {"glm4moe", ScoreFunc::kSigmoid, true, false, true, ActivationKind::kSwiGLU,
     SharedRule::kUnscaled, false, true, true, false},
    {"gpt-oss", ScoreFunc::kSoftmaxSelected, false, false, false, ActivationKind::kSwiGLUOai,
     SharedRule::kNone, true, false, false, false},
    {"llama", ScoreFunc::kSoftmax, false, true, false, ActivationKind::kSwiGLU, SharedRule::kNone,
     false, false, false, true},
};

const ArchRules* find_arch(std::string_view name) {
  for (const ArchRules& a : kArchs)
    if (a.name == name) return &a;
  return nullptr;
}

// {arch}.<key> keys the block reads. Any other expert_/moe_/swiglu_/router_ key is refused.
constexpr std::string_view kHonouredKeys[] = {
    "expert_count",
    "expert_used_count",
    "expert_feed_forward_length",
    "expert_shared_feed_forward_length",
    "expert_shared_count",
    "expert_weights_scale",
    "expert_weights_norm",
    "expert_gating_func",
    "expert_group_count",
    "expert_group_used_count",
    "leading_dense_block_count",
};
constexpr std::string_view kBlockKeyPrefixes[] = {"expert_", "moe_", "swiglu_", "router_",
                                                  "leading_dense"};

// ---- tensors of one layer --------------------------------------------------------------------
constexpr std::string_view kKnownSuffixes[] = {
    "ffn_norm.weight",           "ffn_gate_inp.weight",     "ffn_gate_inp.bias",
    "ffn_gate_exps.weight",      "ffn_gate_exps.bias",      "ffn_up_exps.weight",
    "ffn_up_exps.bias",          "ffn_gate_up_exps.weight", "ffn_gate_up_exps.bias",
    "ffn_down_exps.weight",      "ffn_down_exps.bias",      "exp_probs_b.bias",
    "ffn_gate_shexp.weight",     "ffn_up_shexp.weight",     "ffn_down_shexp.weight",
    "ffn_gate_inp_shexp.weight", "ffn_gate.weight",         "ffn_up.weight",
    "ffn_down.weight",
};

struct LayerTensors {
  std::map<std::string, const TensorInfo*, std::less<>> named;  // suffix -> tensor
  std::map<int, const TensorInfo*> per_expert[3];               // gate, up, down by expert
  std::vector<const TensorInfo*> unknown;                       // ffn_* not in any block

  const TensorInfo* get(std::string_view suffix) const {
    const auto it = named.find(suffix);
    return it == named.end() ? nullptr : it->second;
  }
  bool has_experts() const {
    return get("ffn_gate_exps.weight") || get("ffn_up_exps.weight") ||
           get("ffn_gate_up_exps.weight") || get("ffn_down_exps.weight") ||
           !per_expert[0].empty() || !per_expert[1].empty() || !per_expert[2].empty();
  }
  bool has_dense() const {
    return get("ffn_gate.weight") || get("ffn_up.weight") || get("ffn_down.weight");
  }
  bool has_ffn() const {
    for (const auto& [suffix, t] : named)
      if (suffix != "ffn_norm.weight") return true;
    return has_experts() || !unknown.empty();
  }
};

// "ffn_gate.3.weight" -> (0, 3); nullopt for anything else.
std::optional<std::pair<int, int>> per_expert_slot(std::string_view suffix) {
  static const std::string_view kinds[3] = {"ffn_gate.", "ffn_up.", "ffn_down."};
  for (int kind = 0; kind < 3; ++kind) {
    if (!suffix.starts_with(kinds[kind]) || !suffix.ends_with(".weight")) continue;
    const std::string_view digits =
        suffix.substr(kinds[kind].size(), suffix.size() - kinds[kind].size() - 7);
    int expert = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), expert);
    // One spelling per expert: "ffn_gate.03." would otherwise stand for "ffn_gate.3.".
    if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size() && expert >= 0 &&
        digits == std::to_string(expert))
      return std::make_pair(kind, expert);
  }
  return std::nullopt;
}

std::map<int, LayerTensors> collect_layers(const Model& model) {
  std::map<int, LayerTensors> layers;
  for (const auto& file : model.files()) {
    for (const TensorInfo& t : file->tensors()) {
      const std::string_view name = t.name;
      if (!name.starts_with("blk.")) continue;
      const std::string_view rest = name.substr(4);
      const size_t dot = rest.find('.');
      if (dot == std::string_view::npos || dot == 0) continue;
      int layer = -1;
      const auto [end, ec] = std::from_chars(rest.data(), rest.data() + dot, layer);
      if (end != rest.data() + dot) continue;  // "blk.<non-number>." is not a layer tensor
      const auto damaged = [&](const std::string& why) {
        fail(Status::kBadFile, fmt::format("{}: tensor '{}': {}", file->path(), printable(t.name), why));
      };
      if (ec != std::errc() || layer < 0) damaged("layer index out of range");
      // One spelling per layer: "blk.01." next to "blk.1." would otherwise replace it silently.
      if (rest.substr(0, dot) != std::to_string(layer))
        damaged(fmt::format("layer number '{}' is not written canonically (expected 'blk.{}.')",
                            printable(rest.substr(0, dot)), layer));
      const std::string_view suffix = rest.substr(dot + 1);
      const bool known = std::find(std::begin(kKnownSuffixes), std::end(kKnownSuffixes), suffix) !=
                         std::end(kKnownSuffixes);
      if (known) {
        const auto [at, inserted] = layers[layer].named.emplace(std::string(suffix), &t);
        if (!inserted) damaged(fmt::format("the same layer tensor as '{}'", printable(at->second->name)));
      } else if (const auto slot = per_expert_slot(suffix)) {
        const TensorInfo*& entry = layers[layer].per_expert[slot->first][slot->second];
        if (entry != nullptr) damaged(fmt::format("the same expert tensor as '{}'", printable(entry->name)));
        entry = &t;
      } else if (suffix.starts_with("ffn_") || suffix.starts_with("exp_probs")) {
        layers[layer].unknown.push_back(&t);
      }
    }
  }
  return layers;
}

std::string lower_type(GgmlType type) {
  std::string s(ggml_type_name(type));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string shape_string(const std::vector<int64_t>& ne) {
  return fmt::format("[{}]", fmt::join(ne, ", "));
}

[[noreturn]] void unsupported(const std::string& what) {
  fail(Status::kUnsupported, what);
}
[[noreturn]] void bad(const Model& m, const std::string& what) {
  fail(Status::kBadFile, fmt::format("{}: {}", m.named().path(), what));
}

// ---- keys --------------------------------------------------------------------------------------
struct Keys {
  const Model& model;
  std::string arch;

  const MetaValue* find(std::string_view key) const {
    return model.meta().find(arch + "." + std::string(key));
  }
  std::string name(std::string_view key) const { return arch + "." + std::string(key); }
  std::optional<int64_t> integer(std::string_view key) const {
    const MetaValue* v = find(key);
    if (v == nullptr) return std::nullopt;
    const auto n = v->as_int();
    if (!n || v->type == ValueType::BOOL || *n < 0)
      bad(model, fmt::format("key '{}': expected a non-negative integer", name(key)));
    return n;
  }
  std::optional<bool> boolean(std::string_view key) const {
    const MetaValue* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (v->type != ValueType::BOOL) bad(model, fmt::format("key '{}': expected a bool", name(key)));
    return std::get<bool>(v->value);
  }
  std::optional<double> real(std::string_view key) const {
    const MetaValue* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (v->type == ValueType::F32 || v->type == ValueType::F64) return std::get<double>(v->value);
    if (const auto n = v->as_int(); n && v->type != ValueType::BOOL) return static_cast<double>(*n);
    bad(model, fmt::format("key '{}': expected a number", name(key)));
  }
};

// Refuses any block key of the architecture the block does not read.
void check_block_keys(const Model& model, const std::string& arch) {
  const std::string prefix = arch + ".";
  for (const auto& [key, value] : model.meta().metadata()) {
    if (!key.starts_with(prefix)) continue;
    const std::string_view suffix = std::string_view(key).substr(prefix.size());
    const bool block_key = std::any_of(std::begin(kBlockKeyPrefixes), std::end(kBlockKeyPrefixes),
                                       [&](std::string_view p) { return suffix.starts_with(p); });
    const bool honoured = std::find(std::begin(kHonouredKeys), std::end(kHonouredKeys), suffix) !=
                          std::end(kHonouredKeys);
    if (block_key && !honoured)
      unsupported(fmt::format("key '{}': strata-moe does not compute what it asks for", key));
  }
}

ScoreFunc gating_from_key(const Keys& keys, const ArchRules& rules) {
  const auto value = keys.integer("expert_gating_func");
  const std::string key = keys.name("expert_gating_func");
  if (!value || *value == 0) return rules.score;
  if (*value > 4)
    bad(keys.model, fmt::format("key '{}': {} is out of range (1 softmax, 2 sigmoid, 3 softmax "
                                "over the selected, 4 sqrt-softplus)",
                                key, *value));
  if (*value == 4)
    unsupported(fmt::format("key '{}': sqrt-softplus gating (4) is not computed", key));
  const ScoreFunc asked = *value == 1   ? ScoreFunc::kSoftmax
                          : *value == 2 ? ScoreFunc::kSigmoid
                                        : ScoreFunc::kSoftmaxSelected;
  if (!rules.gating_key && asked != rules.score)
    unsupported(fmt::format("key '{}': {} asks for other gating than {}'s graph computes", key,
                            *value, rules.name));
  return asked;
}

// ---- tensor views ------------------------------------------------------------------------------
// Block format with an int8 path, or a refusal naming the tensor and its type.
void require_int8_format(const TensorInfo& t) {
  const FormatInfo* format = find_block_format(t.type);
  if (format == nullptr || !format->int8)
    unsupported(fmt::format("tensor '{}': type {} is not a block format the int8 arms compute",
                            t.name, lower_type(t.type)));
}

void require_shape(const Model& m, const TensorInfo& t, std::initializer_list<int64_t> expected) {
  if (!std::equal(t.ne.begin(), t.ne.end(), expected.begin(), expected.end()))
    bad(m, fmt::format("tensor '{}': shape {}, expected [{}]", t.name, shape_string(t.ne),
                       fmt::join(expected, ", ")));
}

ExpertTensor view3(const Model& m, const TensorInfo& t) {
  if (t.ne.size() != 3)
    bad(m, fmt::format("tensor '{}': shape {} has {} dimensions, expected 3", t.name,
                       shape_string(t.ne), t.ne.size()));
  require_int8_format(t);
  try {
    return make_expert_tensor(t.name, t.type, t.data, t.ne[0], t.ne[1], t.ne[2]);
  } catch (const Error& e) {
    if (e.status() == Status::kInvalidArgument) bad(m, e.what());
    throw;
  }
}

// A small f32/f16/bf16 tensor of the given shape (trailing dimensions of 1 aside, as ggml
// compares shapes), as f32 values (F32 as is; F16/BF16 converted exactly).
const float* floats(const Model& m, const TensorInfo& t, std::initializer_list<int64_t> shape,
                    GgufBlock* out) {
  const std::vector<int64_t> want(shape);
  const size_t dims = std::max(t.ne.size(), want.size());
  for (size_t i = 0; i < dims; ++i)
    if ((i < t.ne.size() ? t.ne[i] : 1) != (i < want.size() ? want[i] : 1))
      bad(m, fmt::format("tensor '{}': shape {}, expected [{}]", t.name, shape_string(t.ne),
                         fmt::join(want, ", ")));
  int64_t count = 1;
  for (int64_t v : want) count *= v;
  if (t.type == GgmlType::F32) return reinterpret_cast<const float*>(t.data);
  if (t.type != GgmlType::F16 && t.type != GgmlType::BF16)
    unsupported(fmt::format("tensor '{}': type {} (f32, f16 or bf16 are read)", t.name,
                            lower_type(t.type)));
  auto values = std::make_unique<std::vector<float>>(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const uint16_t bits = load_u16le(t.data + 2 * i);
    (*values)[i] = t.type == GgmlType::F16 ? fp16_bits_to_float(bits)
                                           : bits_to_float(static_cast<uint32_t>(bits) << 16);
  }
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite((*values)[i]))
      bad(m, fmt::format("tensor '{}': element {} is not finite", t.name, i));
  const float* p = values->data();
  out->owned_f32.push_back(std::move(values));
  return p;
}

// Mixtral's per-expert tensors as one stacked view: in place when the experts lie at one
// stride in one file, else copied (only when `materialise`).
ExpertTensor stack_experts(const Model& m, const std::map<int, const TensorInfo*>& parts,
                           std::string_view kind, int layer, bool materialise, GgufBlock* out) {
  const int n_expert = static_cast<int>(parts.size());
  for (int e = 0; e < n_expert; ++e)
    if (!parts.count(e))
      unsupported(
          fmt::format("tensor 'blk.{}.{}.{}.weight' is missing (layer {} has {} "
                      "per-expert tensors)",
                      layer, kind, e, layer, n_expert));
  const TensorInfo& first = *parts.at(0);
  for (const auto& [e, t] : parts) {
    if (t->ne.size() != 2 || t->ne != first.ne || t->type != first.type)
      bad(m, fmt::format("tensor '{}': shape {} type {} differs from '{}'", t->name,
                         shape_string(t->ne), lower_type(t->type), first.name));
  }
  require_int8_format(first);
  ExpertTensor view =
      make_expert_tensor(fmt::format("blk.{}.{}.[0..{}].weight", layer, kind, n_expert - 1),
                         first.type, first.data, first.ne[0], first.ne[1], n_expert);
  const size_t expert_bytes = view.row_bytes * static_cast<size_t>(first.ne[1]);
  const auto stride = n_expert > 1 ? parts.at(1)->data - first.data : std::ptrdiff_t{0};
  bool even = stride >= static_cast<std::ptrdiff_t>(expert_bytes) || n_expert == 1;
  for (int e = 1; e < n_expert && even; ++e) even = parts.at(e)->data - first.data == stride * e;
  if (even) {
    if (n_expert > 1) view.expert_stride_bytes = static_cast<size_t>(stride);
    return view;
  }
  if (!materialise) return view;  // a dry plan never reads through this view
  auto bytes = std::make_unique<std::vector<uint8_t>>(expert_bytes * n_expert + 2);
  for (int e = 0; e < n_expert; ++e)
    std::memcpy(bytes->data() + 2 + e * expert_bytes, parts.at(e)->data, expert_bytes);
  view.data = bytes->data() + 2;  // 2-byte aligned like a GGUF offset can be
  out->owned_bytes.push_back(std::move(bytes));
  return view;
}

// A per-expert bias, ne [cols, E]; from a merged gate_up bias [2f, E] the half at `offset`.
const float* expert_bias(const Model& m, const TensorInfo& t, int64_t cols, int64_t n_expert,
                         int64_t row_values, int64_t offset, GgufBlock* out) {
  const float* all = floats(m, t, {row_values, n_expert}, out);
  if (row_values == cols) return all;
  auto half = std::make_unique<std::vector<float>>(static_cast<size_t>(cols * n_expert));
  for (int64_t e = 0; e < n_expert; ++e)
    std::copy_n(all + e * row_values + offset, cols, half->data() + e * cols);
  const float* p = half->data();
  out->owned_f32.push_back(std::move(half));
  return p;
}

// The arms of `backend` carrying every expert layer of the block in profile `n` (the registry's
// data; the device is not asked). The first reason an arm refuses goes to *why when none carries it.
std::vector<std::string> arms_for(const MoeBlock& b, Backend backend, Numerics n, std::string* why) {
  std::vector<const MoeLayerWeights*> layers = {&b.routed};
  for (const SharedExpert& s : b.shared) layers.push_back(&s.ffn);
  DeviceCaps any_device;
  any_device.sm90a = true;
  std::vector<std::string> arms;
  for (const ArmSpec& spec : arm_specs(backend)) {
    if (spec.numerics != n) continue;
    std::optional<std::string> reason;
    for (const MoeLayerWeights* l : layers)
      if (!reason) reason = why_not(spec, *l, any_device);
    if (!reason)
      arms.emplace_back(arm_name(spec.arm));
    else if (why != nullptr && why->empty())
      *why = *reason;
  }
  return arms;
}

void support_of(const MoeBlock& b, BlockPlan& plan) {
  plan.cpu_q8 = arms_for(b, Backend::kCpu, Numerics::kQ8, nullptr);
  plan.cpu_q10 = arms_for(b, Backend::kCpu, Numerics::kQ10, nullptr);
  if (!b.routed.is_plain()) {
    plan.cuda = b.routed.has_biases() ? "per-expert biases are computed on the cpu backend only"
                                      : "the swiglu-oai activation is computed on the cpu backend only";
    return;
  }
  std::string why;
  plan.cuda_q8 = arms_for(b, Backend::kCuda, Numerics::kQ8, &why);
  plan.cuda_q10 = arms_for(b, Backend::kCuda, Numerics::kQ10, &why);
  if (plan.cuda_q8.empty() && plan.cuda_q10.empty())
    plan.cuda = arm_specs(Backend::kCuda).empty() ? "strata-moe was built without CUDA" : why;
}

// Builds (or, with materialise = false, only checks) the block of one layer.
void analyse(const Model& m, int layer, const LayerTensors& lt, const BlockOverrides& over,
             bool materialise, GgufBlock& out) {
  const std::string arch = m.architecture();
  if (arch.empty())
    unsupported(m.split().is_split && m.split().index > 0
                    ? fmt::format("a later shard of a split GGUF has no general.architecture "
                                  "(open the first shard, {})",
                                  m.split().shards.front().filename().string())
                    : std::string("no general.architecture key"));
  const ArchRules* rules = find_arch(arch);
  if (rules == nullptr)
    unsupported(
        fmt::format("architecture '{}': strata-moe does not compute its MoE block "
                    "(supported: {})",
                    arch, supported_architectures()));
  check_block_keys(m, arch);
  const Keys keys{m, arch};
  for (const TensorInfo* t : lt.unknown)
    unsupported(fmt::format("tensor '{}': not part of the {} MoE block strata-moe computes",
                            t->name, arch));
  const auto lead = keys.integer("leading_dense_block_count").value_or(0);
  if (lead > 0 && !rules->dense_lead)
    unsupported(fmt::format("key '{}': {} has no leading dense layers in llama.cpp's graph",
                            keys.name("leading_dense_block_count"), arch));
  if (!lt.has_experts()) {
    if (lt.has_dense())
      fail(Status::kInvalidArgument,
           fmt::format("--layer: layer {} is a dense FFN layer{}, not an MoE block", layer,
                       layer < lead
                           ? fmt::format(" ({} = {})", keys.name("leading_dense_block_count"), lead)
                           : std::string()));
    const TensorInfo* any = lt.named.begin() != lt.named.end() ? lt.named.begin()->second : nullptr;
    unsupported(fmt::format("layer {}: tensor '{}' without the expert tensors of an MoE block",
                            layer, any ? any->name : std::string("?")));
  }
  if (lt.has_dense())
    unsupported(
        fmt::format("tensor '{}': a dense FFN beside the experts is not part of the {} "
                    "block",
                    (lt.get("ffn_gate.weight") ? lt.get("ffn_gate.weight")
                     : lt.get("ffn_up.weight") ? lt.get("ffn_up.weight")
                                               : lt.get("ffn_down.weight"))
                        ->name,
                    arch));
  if (layer < lead)
    bad(m, fmt::format("layer {} has expert tensors but {} = {}", layer,
                       keys.name("leading_dense_block_count"), lead));

  // ---- routed experts ----
  MoeBlock& b = out.block;
  BlockPlan& plan = out.plan;
  const TensorInfo* gate = lt.get("ffn_gate_exps.weight");
  const TensorInfo* up = lt.get("ffn_up_exps.weight");
  const TensorInfo* gate_up = lt.get("ffn_gate_up_exps.weight");
  const TensorInfo* down = lt.get("ffn_down_exps.weight");
  const bool per_expert =
      !lt.per_expert[0].empty() || !lt.per_expert[1].empty() || !lt.per_expert[2].empty();
  const auto missing = [&](std::string_view suffix) {
    unsupported(fmt::format("tensor 'blk.{}.{}' is missing from layer {}'s MoE block", layer,
                            suffix, layer));
  };
  if (per_expert) {
    if (!rules->per_expert)
      unsupported(fmt::format(
          "tensor '{}': per-expert tensors are not part of a {} block",
          (lt.per_expert[0].empty() ? lt.per_expert[2] : lt.per_expert[0]).begin()->second->name,
          arch));
    if (gate || up || gate_up || down)
      bad(m, fmt::format("layer {} has both stacked and per-expert expert tensors", layer));
    for (int kind = 0; kind < 3; ++kind)
      if (lt.per_expert[kind].empty())
        missing(std::array{"ffn_gate.0.weight", "ffn_up.0.weight", "ffn_down.0.weight"}[kind]);
    b.routed.gate = stack_experts(m, lt.per_expert[0], "ffn_gate", layer, materialise, &out);
    b.routed.up = stack_experts(m, lt.per_expert[1], "ffn_up", layer, materialise, &out);
    b.routed.down = stack_experts(m, lt.per_expert[2], "ffn_down", layer, materialise, &out);
  } else if (gate_up) {
    if (gate || up)
      bad(m, fmt::format("layer {} has both a merged gate_up and separate gate/up", layer));
    if (!down) missing("ffn_down_exps.weight");
    const ExpertTensor merged = view3(m, *gate_up);
    if (merged.out_features % 2 != 0)
      bad(m, fmt::format("tensor '{}': odd row count {}", gate_up->name, merged.out_features));
    b.routed.gate = merged;
    b.routed.gate.out_features = merged.out_features / 2;
    b.routed.up = b.routed.gate;
    b.routed.up.data =
        merged.data + static_cast<size_t>(merged.out_features / 2) * merged.row_bytes;
    b.routed.down = view3(m, *down);
  } else {
    if (!gate) missing("ffn_gate_exps.weight");
    if (!up) missing("ffn_up_exps.weight");
    if (!down) missing("ffn_down_exps.weight");
    b.routed.gate = view3(m, *gate);
    b.routed.up = view3(m, *up);
    b.routed.down = view3(m, *down);
  }
  b.routed.d = b.routed.gate.in_features;
  b.routed.f = b.routed.gate.out_features;
  b.routed.n_expert = b.routed.gate.n_expert;
  b.routed.activation.kind = rules->activation;
  try {
    validate_layer(b.routed);
  } catch (const Error& e) {
    if (e.status() == Status::kInvalidArgument) bad(m, e.what());
    throw;
  }
  const int64_t d = b.routed.d, f = b.routed.f, E = b.routed.n_expert;
  if (const auto n = keys.integer("expert_count"); n && *n != E)
    bad(m, fmt::format("tensor '{}': {} experts but {} = {}", b.routed.gate.name, E,
                       keys.name("expert_count"), *n));
  if (const auto n = keys.integer("expert_feed_forward_length"); n && *n != f)
    bad(m, fmt::format("tensor '{}': ffn {} but {} = {}", b.routed.gate.name, f,
                       keys.name("expert_feed_forward_length"), *n));

  // ---- biases ----
  const TensorInfo* router_bias = lt.get("ffn_gate_inp.bias");
  const TensorInfo* bias_names[] = {lt.get("ffn_gate_exps.bias"), lt.get("ffn_up_exps.bias"),
                                    lt.get("ffn_gate_up_exps.bias"), lt.get("ffn_down_exps.bias"),
                                    router_bias};
  for (const TensorInfo* t : bias_names)
    if (t != nullptr && !rules->biases)
      unsupported(fmt::format("tensor '{}': biases are not part of the {} block", t->name, arch));
  if (const TensorInfo* t = lt.get("ffn_gate_up_exps.bias")) {
    if (!gate_up) bad(m, fmt::format("tensor '{}' without a merged gate_up tensor", t->name));
    b.routed.gate_bias = expert_bias(m, *t, f, E, 2 * f, 0, &out);
    b.routed.up_bias = expert_bias(m, *t, f, E, 2 * f, f, &out);
  }
  if (const TensorInfo* t = lt.get("ffn_gate_exps.bias"))
    b.routed.gate_bias = expert_bias(m, *t, f, E, f, 0, &out);
  if (const TensorInfo* t = lt.get("ffn_up_exps.bias"))
    b.routed.up_bias = expert_bias(m, *t, f, E, f, 0, &out);
  if (const TensorInfo* t = lt.get("ffn_down_exps.bias"))
    b.routed.down_bias = expert_bias(m, *t, d, E, d, 0, &out);

  // ---- routing ----
  const TensorInfo* router = lt.get("ffn_gate_inp.weight");
  if (router != nullptr) {
    require_shape(m, *router, {d, E});
    b.router = floats(m, *router, {d, E}, &out);
  } else if (router_bias != nullptr) {
    bad(m, fmt::format("tensor '{}' without a router", router_bias->name));
  }
  if (router_bias != nullptr) b.routing.logit_bias = floats(m, *router_bias, {E}, &out);
  if (const TensorInfo* t = lt.get("exp_probs_b.bias")) {
    if (!rules->selection_bias)
      unsupported(
          fmt::format("tensor '{}': a selection bias is not part of the {} block", t->name, arch));
    b.routing.selection_bias = floats(m, *t, {E}, &out);
  }
  b.routing.score = over.score ? *over.score : gating_from_key(keys, *rules);
  const auto norm = keys.boolean("expert_weights_norm");
  if (norm && !rules->norm_key && *norm != rules->normalize)
    unsupported(
        fmt::format("key '{}': {} asks for other weight normalisation than {}'s graph "
                    "computes",
                    keys.name("expert_weights_norm"), *norm, arch));
  b.routing.normalize = rules->norm_key && norm ? *norm : rules->normalize;
  if (const auto scale = keys.real("expert_weights_scale")) {
    if (!std::isfinite(*scale) || *scale < 0.0)
      bad(m, fmt::format("key '{}': {} is not a finite non-negative scale",
                         keys.name("expert_weights_scale"), *scale));
    const float narrowed = static_cast<float>(*scale);
    if (*scale != 0.0 && !(std::isfinite(narrowed) && narrowed != 0.0f))
      bad(m, fmt::format("key '{}': {} is outside float's range", keys.name("expert_weights_scale"),
                         *scale));
    b.routing.scale = *scale == 0.0 ? 1.0f : narrowed;
  }
  const auto groups = keys.integer("expert_group_count").value_or(0);
  const auto groups_used = keys.integer("expert_group_used_count").value_or(0);
  if (groups > E)
    bad(m, fmt::format("key '{}': {} groups of {} experts", keys.name("expert_group_count"),
                       groups, E));
  if (groups_used > std::max<int64_t>(groups, 1))
    bad(m, fmt::format("key '{}': {} is more than the {} groups",
                       keys.name("expert_group_used_count"), groups_used, groups));
  if (groups > 1) {
    b.routing.n_group = static_cast<int>(groups);
    b.routing.n_group_used = static_cast<int>(groups_used);
  }
  const auto used = keys.integer("expert_used_count");
  const int64_t k = over.k > 0 ? over.k : used.value_or(0);
  b.k = k < 1 || k > E || k > 64 ? 0 : static_cast<int>(k);
  if (b.k == 0)
    fail(over.k > 0 ? Status::kInvalidArgument : Status::kBadFile,
         over.k > 0 ? fmt::format("--k: {} must be in [1, min(E = {}, 64)]", over.k, E)
         : used ? fmt::format("{}: key '{}': {} is not in [1, min(E = {}, 64)]", m.named().path(),
                              keys.name("expert_used_count"), *used, E)
                : fmt::format("{}: key '{}' is missing (pass --k)", m.named().path(),
                              keys.name("expert_used_count")));
  try {
    validate_routing_spec(b.routing, E, b.k);
  } catch (const Error& e) {
    if (over.k > 0 || over.score) throw;
    bad(m, fmt::format("keys '{}.expert_group_*' / '{}.expert_weights_scale': {}", arch, arch,
                       e.what()));
  }

  // ---- shared experts ----
  const TensorInfo* sg = lt.get("ffn_gate_shexp.weight");
  const TensorInfo* su = lt.get("ffn_up_shexp.weight");
  const TensorInfo* sd = lt.get("ffn_down_shexp.weight");
  const TensorInfo* sgate = lt.get("ffn_gate_inp_shexp.weight");
  const auto shared_count = keys.integer("expert_shared_count").value_or(0);
  const bool any_shared = sg || su || sd || sgate;
  if (rules->shared == SharedRule::kNone && any_shared)
    unsupported(fmt::format("tensor '{}': {}'s block has no shared expert",
                            (sg   ? sg
                             : su ? su
                             : sd ? sd
                                  : sgate)
                                ->name,
                            arch));
  const bool want_shared = rules->shared == SharedRule::kGatedRequired || any_shared ||
                           (rules->shared == SharedRule::kUnscaled && shared_count > 0);
  if (want_shared) {
    if (!sg) missing("ffn_gate_shexp.weight");
    if (!su) missing("ffn_up_shexp.weight");
    if (!sd) missing("ffn_down_shexp.weight");
    const bool gated =
        rules->shared == SharedRule::kGated || rules->shared == SharedRule::kGatedRequired;
    if (gated && !sgate) missing("ffn_gate_inp_shexp.weight");
    if (!gated && sgate)
      unsupported(fmt::format("tensor '{}': {}'s shared expert is not gated", sgate->name, arch));
    if (sg->ne.size() != 2 || sg->ne[0] != d)
      bad(m, fmt::format("tensor '{}': shape {}, expected [{}, ffn_shared]", sg->name,
                         shape_string(sg->ne), d));
    const int64_t fs = sg->ne[1];
    require_shape(m, *su, {d, fs});
    require_shape(m, *sd, {fs, d});
    if (const auto n = keys.integer("expert_shared_feed_forward_length"); n && *n != fs)
      bad(m, fmt::format("tensor '{}': ffn {} but {} = {}", sg->name, fs,
                         keys.name("expert_shared_feed_forward_length"), *n));
    for (const TensorInfo* t : {sg, su, sd}) require_int8_format(*t);
    SharedExpert s;
    s.ffn.d = d;
    s.ffn.f = fs;
    s.ffn.n_expert = 1;
    s.ffn.gate = make_expert_tensor(sg->name, sg->type, sg->data, d, fs, 1);
    s.ffn.up = make_expert_tensor(su->name, su->type, su->data, d, fs, 1);
    s.ffn.down = make_expert_tensor(sd->name, sd->type, sd->data, fs, d, 1);
    if (gated) {
      s.gate = floats(m, *sgate, {d}, &out);
      s.gate_name = sgate->name;
    }
    b.shared.push_back(std::move(s));
    plan.extras.push_back(
        fmt::format("shared expert ffn {} ({})", fs, gated ? "sigmoid-gated" : "unscaled"));
  }
  try {
    validate_block(b);
  } catch (const Error& e) {
    if (e.status() == Status::kInvalidArgument) bad(m, e.what());
    throw;
  }

  plan.routing = b.router != nullptr ? describe_routing(b.routing, b.k, E)
                                     : "no router (ids and weights from the caller)";
  plan.k = b.k;
  if (b.routed.has_biases()) plan.extras.push_back("expert biases");
  if (rules->activation == ActivationKind::kSwiGLUOai)
    plan.extras.push_back("swiglu-oai (alpha 1.702, limit 7)");
  support_of(b, plan);
}

// Descriptive columns of a layer straight from its tensors (never throws).
void describe(const LayerTensors& lt, BlockPlan& plan) {
  const TensorInfo* gate = lt.get("ffn_gate_exps.weight");
  const TensorInfo* up = lt.get("ffn_up_exps.weight");
  const TensorInfo* gate_up = lt.get("ffn_gate_up_exps.weight");
  const TensorInfo* down = lt.get("ffn_down_exps.weight");
  plan.kind = lt.has_experts() ? BlockKind::kMoe
              : lt.has_dense() ? BlockKind::kDense
                               : BlockKind::kUnknown;
  plan.merged_gate_up = gate_up != nullptr;
  if (!lt.per_expert[0].empty()) {
    plan.per_expert_tensors = true;
    gate = lt.per_expert[0].begin()->second;
    if (!lt.per_expert[1].empty()) up = lt.per_expert[1].begin()->second;
    if (!lt.per_expert[2].empty()) down = lt.per_expert[2].begin()->second;
    plan.n_expert = static_cast<int64_t>(lt.per_expert[0].size());
  }
  if (plan.kind == BlockKind::kDense) {
    gate = lt.get("ffn_gate.weight");
    up = lt.get("ffn_up.weight");
    down = lt.get("ffn_down.weight");
  }
  const TensorInfo* first = gate_up ? gate_up : gate;
  if (first && first->ne.size() >= 2) {
    plan.d = first->ne[0];
    plan.f = gate_up ? first->ne[1] / 2 : first->ne[1];
    if (first->ne.size() >= 3) plan.n_expert = first->ne[2];
  }
  plan.gate_type = gate_up ? lower_type(gate_up->type) : gate ? lower_type(gate->type) : "-";
  plan.up_type = gate_up ? lower_type(gate_up->type) : up ? lower_type(up->type) : "-";
  plan.down_type = down ? lower_type(down->type) : "-";
  for (const char* s : {"ffn_gate_exps.weight", "ffn_up_exps.weight", "ffn_gate_up_exps.weight",
                        "ffn_down_exps.weight"})
    if (const TensorInfo* t = lt.get(s)) plan.bytes += t->bytes;
  for (const auto& kind : lt.per_expert)
    for (const auto& [e, t] : kind) plan.bytes += t->bytes;
}

}  // namespace

// ---- split GGUFs and models ---------------------------------------------------------------------
SplitInfo split_info(const File& file) {
  SplitInfo info;
  const MetaValue* no = file.find("split.no");
  const MetaValue* count = file.find("split.count");
  if (no == nullptr || count == nullptr || !no->as_int() || !count->as_int()) return info;
  // Shards are named <prefix>-NNNNN-of-NNNNN.gguf: a count beyond five digits, or one the name
  // contradicts, is a damaged key, refused before any shard name is made.
  const int64_t index = *no->as_int(), n = *count->as_int();
  if (n < 1 || n > 99999 || index < 0 || index >= n)
    fail(Status::kBadFile,
         fmt::format("{}: keys 'split.no' = {} and 'split.count' = {} do not name a shard of a "
                     "split of 1 to 99999 files",
                     file.path(), index, n));
  info.index = static_cast<int>(index);
  info.count = static_cast<int>(n);
  info.is_split = true;
  const std::filesystem::path path(file.path());
  const std::string name = path.filename().string();
  static const std::regex pattern(R"((.*)-(\d{5})-of-(\d{5})\.gguf)");
  std::smatch match;
  if (!std::regex_match(name, match, pattern)) return info;
  if (std::stoi(match[2].str()) != info.index + 1 || std::stoi(match[3].str()) != info.count)
    fail(Status::kBadFile,
         fmt::format("{}: keys 'split.no' = {} and 'split.count' = {} disagree with the file name "
                     "(shard {} of {})",
                     file.path(), index, n, match[2].str(), match[3].str()));
  for (int i = 0; i < info.count; ++i) {
    info.shards.push_back(path.parent_path() / fmt::format("{}-{:05d}-of-{:05d}.gguf",
                                                           match[1].str(), i + 1, info.count));
    info.present.push_back(i == info.index || std::filesystem::exists(info.shards.back()));
  }
  return info;
}

Model Model::open(const std::filesystem::path& path, std::string_view option) {
  Model model;
  auto named = std::make_unique<File>(File::open(path, option));
  model.split_ = split_info(*named);
  if (model.split_.is_split && !model.split_.shards.empty()) {
    for (int i = 0; i < model.split_.count; ++i) {
      if (i == model.split_.index) {
        model.named_ = model.files_.size();
        model.files_.push_back(std::move(named));
      } else if (model.split_.present[i]) {
        auto shard = std::make_unique<File>(File::open(model.split_.shards[i]));
        // Each shard's own keys must make it shard i of the same split (its name is checked
        // against them by split_info).
        const SplitInfo own = split_info(*shard);
        if (!own.is_split || own.index != i || own.count != model.split_.count)
          fail(Status::kBadFile,
               fmt::format("{}: keys 'split.no' and 'split.count' {}, expected {} and {} for "
                           "this shard of '{}'",
                           shard->path(),
                           own.is_split ? fmt::format("are {} and {}", own.index, own.count)
                                        : std::string("are missing"),
                           i, model.split_.count, path.string()));
        model.files_.push_back(std::move(shard));
      }
    }
  } else {
    model.files_.push_back(std::move(named));
  }
  for (const auto& file : model.files_)
    for (const TensorInfo& t : file->tensors()) model.tensors_.emplace(t.name, &t);
  return model;
}

const TensorInfo* Model::find_tensor(std::string_view name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second;
}

std::string supported_architectures() {
  std::vector<std::string_view> names;
  for (const ArchRules& a : kArchs) names.push_back(a.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::vector<BlockPlan> plan_blocks(const Model& model) {
  std::vector<BlockPlan> plans;
  for (const auto& [layer, tensors] : collect_layers(model)) {
    if (!tensors.has_ffn()) continue;
    GgufBlock block;
    block.plan.layer = layer;
    describe(tensors, block.plan);
    try {
      analyse(model, layer, tensors, {}, false, block);
    } catch (const Error& e) {
      block.plan.cpu = e.what();
      block.plan.cuda = "-";
      block.plan.cpu_q8.clear();
      block.plan.cpu_q10.clear();
      block.plan.cuda_q8.clear();
      block.plan.cuda_q10.clear();
    }
    plans.push_back(std::move(block.plan));
  }
  return plans;
}

std::unique_ptr<GgufBlock> build_block(const Model& model, int layer, const BlockOverrides& over) {
  const auto layers = collect_layers(model);
  const auto it = layers.find(layer);
  if (it == layers.end() || !it->second.has_ffn()) {
    std::vector<int> moe;
    for (const auto& [l, t] : layers)
      if (t.has_experts()) moe.push_back(l);
    fail(Status::kInvalidArgument,
         fmt::format("--layer: {} is not an MoE layer of {} (MoE layers: [{}])", layer,
                     model.named().path(), fmt::join(moe, ", ")));
  }
  auto block = std::make_unique<GgufBlock>();
  block->plan.layer = layer;
  describe(it->second, block->plan);
  try {
    analyse(model, layer, it->second, over, true, *block);
  } catch (const Error& e) {
    // A refusal names the file, as a damaged file's error (bad()) already does.
    if (e.status() != Status::kUnsupported) throw;
    fail(e.status(), fmt::format("{}: {}", model.named().path(), e.what()));
  }
  return block;
}

}  // namespace strata::gguf
