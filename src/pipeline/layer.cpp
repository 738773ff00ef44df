#include "pipeline/layer.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "formats/registry.hpp"

namespace strata {

ExpertTensor make_expert_tensor(std::string name, GgmlType type, const void* data, int64_t ne0,
                                int64_t ne1, int64_t ne2) {
  const auto info = ggml_type_info(static_cast<uint32_t>(type));
  require(info.has_value(), Status::kUnsupported, fmt::format("tensor '{}': unknown type id {}", name, static_cast<uint32_t>(type)));
  require(ne0 > 0 && ne1 > 0 && ne2 > 0, Status::kInvalidArgument,
          fmt::format("tensor '{}': shape [{}, {}, {}] has a non-positive dimension", name, ne0, ne1, ne2));
  require(ne0 % info->block_values == 0, Status::kInvalidArgument,
          fmt::format("tensor '{}': row length {} is not a multiple of {}'s block of {} values", name, ne0,
                      info->name, info->block_values));
  ExpertTensor t;
  t.name = std::move(name);
  t.type = type;
  t.data = static_cast<const uint8_t*>(data);
  t.in_features = ne0;
  t.out_features = ne1;
  t.n_expert = ne2;
  t.row_bytes = static_cast<size_t>(ne0 / info->block_values) * info->block_bytes;
  t.expert_stride_bytes = t.row_bytes * static_cast<size_t>(ne1);
  return t;
}

namespace {

void check_tensor(const ExpertTensor& t, int64_t in, int64_t out, int64_t n_expert) {
  require(t.data != nullptr, Status::kInvalidArgument, fmt::format("tensor '{}': no data", t.name));
  const FormatInfo* format = find_block_format(t.type);
  require(format != nullptr, Status::kUnsupported,
          fmt::format("tensor '{}': type {} is not a block format strata-moe decodes", t.name,
                      ggml_type_name(t.type)));
  require(t.in_features == in && t.out_features == out && t.n_expert == n_expert,
          Status::kInvalidArgument,
          fmt::format("tensor '{}': shape [{}, {}, {}], expected [{}, {}, {}]", t.name, t.in_features,
                      t.out_features, t.n_expert, in, out, n_expert));
  require(in % format->block_values == 0, Status::kInvalidArgument,
          fmt::format("tensor '{}': row length {} is not a multiple of {}'s block of {} values", t.name,
                      in, format->name, format->block_values));
  require(t.row_bytes == static_cast<size_t>(in / format->block_values) * format->block_bytes,
          Status::kInvalidArgument, fmt::format("tensor '{}': row stride does not match its format", t.name));
}

}  // namespace

void validate_layer(const MoeLayerWeights& layer) {
  require(layer.d > 0 && layer.f > 0 && layer.n_expert > 0, Status::kInvalidArgument,
          fmt::format("layer geometry d={} f={} E={} is not positive", layer.d, layer.f, layer.n_expert));
  require(layer.d <= limits::kMaxWidth && layer.f <= limits::kMaxWidth &&
              layer.n_expert <= limits::kMaxExperts,
          Status::kInvalidArgument,
          fmt::format("tensor '{}': d={} f={} E={} is beyond the limits (d and f at most {}, E at "
                      "most {})",
                      layer.gate.name, layer.d, layer.f, layer.n_expert, limits::kMaxWidth,
                      limits::kMaxExperts));
  require(layer.d % kSubBlockValues == 0 && layer.f % kSubBlockValues == 0, Status::kInvalidArgument,
          fmt::format("layer geometry d={} f={}: both must be multiples of 32", layer.d, layer.f));
  check_tensor(layer.gate, layer.d, layer.f, layer.n_expert);
  check_tensor(layer.up, layer.d, layer.f, layer.n_expert);
  check_tensor(layer.down, layer.f, layer.d, layer.n_expert);
}

}  // namespace strata
