// MoE layer discovery: groups blk.N.* expert tensors into layers and checks them against each
// other and against the {arch}.* hyperparameters.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "common/error.hpp"
#include "gguf/gguf.hpp"

namespace strata::gguf {

namespace {

// Layer indices beyond this are treated as damage: no model has a million blocks.
constexpr int kMaxLayer = 1 << 20;

struct LayerTensors {
  const TensorInfo* gate = nullptr;
  const TensorInfo* up = nullptr;
  const TensorInfo* gate_up = nullptr;
  const TensorInfo* down = nullptr;
  const TensorInfo* router = nullptr;
  const TensorInfo* shared_gate = nullptr;
  const TensorInfo* shared_up = nullptr;
  const TensorInfo* shared_down = nullptr;
  const TensorInfo* shared_router = nullptr;

  bool has_experts() const { return gate || up || gate_up || down; }
};

[[noreturn]] void bad(const File& file, const std::string& reason) {
  fail(Status::kBadFile, fmt::format("{}: {}", file.path(), reason));
}

// The slot a "blk.N.<suffix>" tensor fills, or null for tensors discovery does not use.
const TensorInfo** slot_for(LayerTensors& l, std::string_view suffix) {
  if (suffix == "ffn_gate_exps.weight") return &l.gate;
  if (suffix == "ffn_up_exps.weight") return &l.up;
  if (suffix == "ffn_gate_up_exps.weight") return &l.gate_up;
  if (suffix == "ffn_down_exps.weight") return &l.down;
  if (suffix == "ffn_gate_inp.weight") return &l.router;
  if (suffix == "ffn_gate_shexp.weight") return &l.shared_gate;
  if (suffix == "ffn_up_shexp.weight") return &l.shared_up;
  if (suffix == "ffn_down_shexp.weight") return &l.shared_down;
  if (suffix == "ffn_gate_inp_shexp.weight") return &l.shared_router;
  return nullptr;
}

std::string shape_string(const std::vector<int64_t>& ne) {
  return fmt::format("[{}]", fmt::join(ne, ", "));
}

void require_shape(const File& file, const TensorInfo& t, std::initializer_list<int64_t> expected,
                   std::string_view meaning) {
  if (!std::equal(t.ne.begin(), t.ne.end(), expected.begin(), expected.end()))
    bad(file, fmt::format("tensor '{}': shape {}, expected [{}] ({})", t.name, shape_string(t.ne),
                          fmt::join(expected, ", "), meaning));
}

// An optional positive integer hyperparameter; kBadFile naming the key when it is not one.
std::optional<int64_t> hyperparameter(const File& file, const std::string& key) {
  const MetaValue* v = file.find(key);
  if (v == nullptr) return std::nullopt;
  const auto n = v->as_int();
  if (!n || v->type == ValueType::BOOL || v->type == ValueType::F32 ||
      v->type == ValueType::F64)
    bad(file, fmt::format("key '{}': value type {}, expected an integer", key,
                          value_type_name(v->type)));
  if (*n < 0) bad(file, fmt::format("key '{}': {} is negative", key, *n));
  return n;
}

void check_hyper(const File& file, const std::optional<int64_t>& value, const std::string& key,
                 int64_t actual, const TensorInfo& t, std::string_view dim) {
  if (value && *value != actual)
    bad(file, fmt::format("tensor '{}': {} = {} but {} = {}", t.name, dim, actual, key, *value));
}

ExpertTensor view(const TensorInfo& t) {
  return make_expert_tensor(t.name, t.type, t.data, t.ne[0], t.ne[1], t.ne[2]);
}

MoeLayerInfo build_layer(const File& file, int layer, const LayerTensors& l) {
  const auto missing = [&](std::string_view suffix, const TensorInfo& present) {
    bad(file, fmt::format("layer {}: tensor 'blk.{}.{}' is missing (the layer has '{}')", layer,
                          layer, suffix, present.name));
  };
  const TensorInfo* any = l.gate_up ? l.gate_up : l.gate ? l.gate : l.up ? l.up : l.down;
  if (l.gate_up && (l.gate || l.up))
    bad(file, fmt::format("tensor '{}': layer {} has both a merged gate_up and separate gate/up "
                          "tensors",
                          l.gate_up->name, layer));
  if (!l.gate_up && !l.gate) missing("ffn_gate_exps.weight", *any);
  if (!l.gate_up && !l.up) missing("ffn_up_exps.weight", *any);
  if (!l.down) missing("ffn_down_exps.weight", *any);

  for (const TensorInfo* t : {l.gate, l.up, l.gate_up, l.down}) {
    if (t == nullptr) continue;
    if (t->ne.size() != 3)
      bad(file, fmt::format("tensor '{}': shape {} has {} dimensions, expected 3 (in, out, "
                            "experts)",
                            t->name, shape_string(t->ne), t->ne.size()));
    if (t->ne[0] <= 0 || t->ne[1] <= 0 || t->ne[2] <= 0)
      bad(file, fmt::format("tensor '{}': shape {} has an empty dimension", t->name,
                            shape_string(t->ne)));
  }

  const TensorInfo& first = l.gate_up ? *l.gate_up : *l.gate;
  const int64_t d = first.ne[0];
  const int64_t E = first.ne[2];
  int64_t f = first.ne[1];
  if (l.gate_up) {
    if (f % 2 != 0)
      bad(file, fmt::format("tensor '{}': merged gate_up has an odd row count {}", first.name, f));
    f /= 2;
  } else {
    require_shape(file, *l.up, {d, f, E}, "the shape of the gate tensor");
  }
  require_shape(file, *l.down, {f, d, E}, "[ffn, d, experts] of the gate/up tensors");

  MoeLayerInfo info;
  info.layer = layer;
  info.merged_gate_up = l.gate_up != nullptr;
  info.weights.d = d;
  info.weights.f = f;
  info.weights.n_expert = E;
  try {
    if (l.gate_up) {
      // Expert e's gate rows are 0..f-1 of its [d, 2f] slice and its up rows f..2f-1.
      ExpertTensor merged = view(*l.gate_up);
      info.weights.gate = merged;
      info.weights.gate.out_features = f;
      info.weights.up = merged;
      info.weights.up.out_features = f;
      info.weights.up.data = merged.data + static_cast<size_t>(f) * merged.row_bytes;
      info.bytes = l.gate_up->bytes + l.down->bytes;
    } else {
      info.weights.gate = view(*l.gate);
      info.weights.up = view(*l.up);
      info.bytes = l.gate->bytes + l.up->bytes + l.down->bytes;
    }
    info.weights.down = view(*l.down);
    validate_layer(info.weights);
  } catch (const Error& e) {
    // A shape the layer cannot have is damage in the file, not a caller's mistake.
    if (e.status() == Status::kInvalidArgument) bad(file, e.what());
    throw;
  }

  if (l.router) {
    require_shape(file, *l.router, {d, E}, "[d, experts]");
    if (l.router->type != GgmlType::F32)
      fail(Status::kUnsupported,
           fmt::format("{}: tensor '{}': router type {} (only f32 is read)", file.path(),
                       l.router->name, ggml_type_name(l.router->type)));
  }
  info.router = l.router;

  if (l.shared_gate || l.shared_up || l.shared_down) {
    const TensorInfo* present = l.shared_gate ? l.shared_gate
                                : l.shared_up ? l.shared_up
                                              : l.shared_down;
    if (!l.shared_gate) missing("ffn_gate_shexp.weight", *present);
    if (!l.shared_up) missing("ffn_up_shexp.weight", *present);
    if (!l.shared_down) missing("ffn_down_shexp.weight", *present);
    if (l.shared_gate->ne.size() != 2 || l.shared_gate->ne[0] != d)
      bad(file, fmt::format("tensor '{}': shape {}, expected [{}, ffn_shared]", l.shared_gate->name,
                            shape_string(l.shared_gate->ne), d));
    const int64_t fs = l.shared_gate->ne[1];
    require_shape(file, *l.shared_up, {d, fs}, "the shape of the shared gate tensor");
    require_shape(file, *l.shared_down, {fs, d}, "[ffn_shared, d]");
  }
  if (l.shared_router) {
    if (!(l.shared_router->ne.size() == 1 && l.shared_router->ne[0] == d) &&
        !(l.shared_router->ne.size() == 2 && l.shared_router->ne[0] == d &&
          l.shared_router->ne[1] == 1))
      bad(file, fmt::format("tensor '{}': shape {}, expected [{}]", l.shared_router->name,
                            shape_string(l.shared_router->ne), d));
  }
  info.shared_gate = l.shared_gate;
  info.shared_up = l.shared_up;
  info.shared_down = l.shared_down;
  info.shared_router = l.shared_router;
  return info;
}

}  // namespace

std::vector<MoeLayerInfo> discover_moe_layers(const File& file) {
  std::map<int, LayerTensors> layers;
  for (const TensorInfo& t : file.tensors()) {
    const std::string_view name = t.name;
    if (!name.starts_with("blk.")) continue;
    const std::string_view rest = name.substr(4);
    const size_t dot = rest.find('.');
    if (dot == std::string_view::npos || dot == 0) continue;
    int layer = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + dot, layer);
    if (end != rest.data() + dot) continue;  // "blk.<non-number>." is not a layer tensor
    if (ec != std::errc() || layer < 0 || layer > kMaxLayer)
      bad(file, fmt::format("tensor '{}': layer index out of range (0 to {})", t.name, kMaxLayer));
    // One spelling per layer: "blk.01." next to "blk.1." would otherwise replace it silently.
    const std::string canonical = std::to_string(layer);
    if (rest.substr(0, dot) != canonical)
      bad(file, fmt::format("tensor '{}': layer number '{}' is not written canonically (expected "
                            "'blk.{}.')",
                            t.name, rest.substr(0, dot), canonical));
    const TensorInfo** slot = slot_for(layers[layer], rest.substr(dot + 1));
    if (slot == nullptr) continue;
    if (*slot != nullptr)
      bad(file, fmt::format("tensors '{}' and '{}' are the same layer tensor", (*slot)->name,
                            t.name));
    *slot = &t;
  }

  const std::string arch = file.architecture();
  std::optional<int64_t> n_embd, n_ff_exp, n_expert, n_used, n_block;
  if (!arch.empty()) {
    n_embd = hyperparameter(file, arch + ".embedding_length");
    n_ff_exp = hyperparameter(file, arch + ".expert_feed_forward_length");
    n_expert = hyperparameter(file, arch + ".expert_count");
    n_used = hyperparameter(file, arch + ".expert_used_count");
    n_block = hyperparameter(file, arch + ".block_count");
  }

  std::vector<MoeLayerInfo> result;
  for (const auto& [layer, tensors] : layers) {
    if (!tensors.has_experts()) continue;
    MoeLayerInfo info = build_layer(file, layer, tensors);
    const TensorInfo& gate = tensors.gate_up ? *tensors.gate_up : *tensors.gate;
    check_hyper(file, n_embd, arch + ".embedding_length", info.weights.d, gate, "ne[0] (d)");
    check_hyper(file, n_ff_exp, arch + ".expert_feed_forward_length", info.weights.f, gate,
                tensors.gate_up ? "ne[1] / 2 (ffn)" : "ne[1] (ffn)");
    check_hyper(file, n_expert, arch + ".expert_count", info.weights.n_expert, gate,
                "ne[2] (experts)");
    if (n_block && layer >= *n_block)
      bad(file, fmt::format("tensor '{}': layer {} is not below {}.block_count = {}", gate.name,
                            layer, arch, *n_block));
    if (n_used) {
      if (*n_used < 1 || *n_used > info.weights.n_expert)
        bad(file, fmt::format("key '{}.expert_used_count': {} is not between 1 and the {} experts "
                              "of tensor '{}'",
                              arch, *n_used, info.weights.n_expert, gate.name));
      info.n_expert_used = *n_used;
    }
    result.push_back(std::move(info));
  }
  return result;
}

}  // namespace strata::gguf
