#include "synth/synth.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "common/bytes.hpp"
#include "common/alloc.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "formats/registry.hpp"

namespace strata::synth {
namespace {

enum class FieldKind {
  kF16,     // f16 at offset
  kF16Min,  // f16 min/offset term at offset (random sign)
  kE8M0,    // MXFP4 shared exponent byte
  kUe4m3,   // NVFP4 scale byte
  kIq1mD,   // IQ1_M: f16 d in the top nibbles of the 4 scale words starting at offset
};

struct ScaleField {
  FieldKind kind;
  int offset;
};

struct ScaleLayout {
  GgmlType type;
  ScaleField fields[4];
  int n_fields;
};

// Where each format keeps its block scale(s) (FORMATS.md layouts).
constexpr ScaleLayout kLayouts[] = {
    {GgmlType::Q8_0, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::Q4_0, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::Q4_1, {{FieldKind::kF16, 0}, {FieldKind::kF16Min, 2}}, 2},
    {GgmlType::Q5_0, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::Q5_1, {{FieldKind::kF16, 0}, {FieldKind::kF16Min, 2}}, 2},
    {GgmlType::Q1_0, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::Q2_0, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::Q2_K, {{FieldKind::kF16, 80}, {FieldKind::kF16, 82}}, 2},
    {GgmlType::Q3_K, {{FieldKind::kF16, 108}}, 1},
    {GgmlType::Q4_K, {{FieldKind::kF16, 0}, {FieldKind::kF16, 2}}, 2},
    {GgmlType::Q5_K, {{FieldKind::kF16, 0}, {FieldKind::kF16, 2}}, 2},
    {GgmlType::Q6_K, {{FieldKind::kF16, 208}}, 1},
    {GgmlType::TQ1_0, {{FieldKind::kF16, 52}}, 1},
    {GgmlType::TQ2_0, {{FieldKind::kF16, 64}}, 1},
    {GgmlType::IQ2_XXS, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::IQ2_XS, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::IQ2_S, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::IQ3_XXS, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::IQ3_S, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::IQ1_S, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::IQ4_NL, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::IQ4_XS, {{FieldKind::kF16, 0}}, 1},
    {GgmlType::MXFP4, {{FieldKind::kE8M0, 0}}, 1},
    {GgmlType::NVFP4,
     {{FieldKind::kUe4m3, 0},
      {FieldKind::kUe4m3, 1},
      {FieldKind::kUe4m3, 2},
      {FieldKind::kUe4m3, 3}},
     4},
    {GgmlType::IQ1_M, {{FieldKind::kIq1mD, 48}}, 1},
};

const ScaleLayout* layout_of(GgmlType type) {
  for (const auto& l : kLayouts)
    if (l.type == type) return &l;
  return nullptr;
}

void store_u16le(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xFF);
  p[1] = static_cast<uint8_t>(v >> 8);
}

uint8_t encode_e8m0(double s) {  // MXFP4 value = table * 2^(e - 128)
  const double e = std::round(std::log2(s)) + 128.0;
  return static_cast<uint8_t>(std::clamp(e, 1.0, 254.0));
}

uint8_t encode_ue4m3(double s) {  // scale = 0.5 * (1 + M/8) * 2^(E - 7), E in 1..15
  const double v = s / 0.5;
  int e = static_cast<int>(std::floor(std::log2(v))) + 7;
  e = std::clamp(e, 1, 15);
  int m = static_cast<int>(std::lround((v / std::ldexp(1.0, e - 7) - 1.0) * 8.0));
  m = std::clamp(m, 0, 7);
  if (e == 15 && m == 7) m = 6;  // 0x7F decodes to 0
  return static_cast<uint8_t>((e << 3) | m);
}

// Writes the scale fields of one block for a nominal scale `s`, each jittered by [0.5, 1.5).
void set_scales(uint8_t* block, const ScaleLayout& layout, double s, Rng& rng) {
  for (int i = 0; i < layout.n_fields; ++i) {
    const ScaleField& field = layout.fields[i];
    const double v = s * (0.5 + rng.uniform());
    uint8_t* p = block + field.offset;
    switch (field.kind) {
      case FieldKind::kF16:
        store_u16le(p, float_to_fp16_bits(static_cast<float>(v)));
        break;
      case FieldKind::kF16Min:
        store_u16le(p, float_to_fp16_bits(static_cast<float>(rng.uniform() < 0.5 ? -v : v)));
        break;
      case FieldKind::kE8M0:
        *p = encode_e8m0(v);
        break;
      case FieldKind::kUe4m3:
        *p = encode_ue4m3(v);
        break;
      case FieldKind::kIq1mD: {
        const uint16_t bits = float_to_fp16_bits(static_cast<float>(v));
        for (int w = 0; w < 4; ++w)
          p[2 * w + 1] =
              static_cast<uint8_t>((p[2 * w + 1] & 0x0F) | (((bits >> (4 * w)) & 0xF) << 4));
        break;
      }
    }
  }
}

void fill_blocks(uint8_t* out, int64_t n_blocks, int block_bytes, const ScaleLayout& layout,
                 double s, Rng& rng) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* block = out + b * block_bytes;
    for (int i = 0; i < block_bytes; i += 8) {
      const uint64_t r = rng.next();
      std::memcpy(block + i, &r, static_cast<size_t>(std::min(8, block_bytes - i)));
    }
    set_scales(block, layout, s, rng);
  }
}

}  // namespace

double Rng::normal() {
  const double u1 = 1.0 - uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

uint16_t float_to_fp16_bits(float v) {
  uint32_t x;
  std::memcpy(&x, &v, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u)
    return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // subnormal half: value / 2^-24, rounded to nearest even
    float a;
    std::memcpy(&a, &abs, sizeof a);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f)));
  }
  const uint32_t mantissa_round = abs + 0xFFFu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((mantissa_round - 0x38000000u) >> 13));
}

uint64_t expert_tensor_bytes(GgmlType type, int64_t in_features, int64_t out_features,
                             int64_t n_expert) {
  const auto info = ggml_type_info(static_cast<uint32_t>(type));
  require(info.has_value(), Status::kUnsupported,
          fmt::format("synth: unknown type id {}", static_cast<uint32_t>(type)));
  const std::string shape = fmt::format("[{}, {}, {}]", in_features, out_features, n_expert);
  require(in_features >= 1 && in_features <= limits::kMaxWidth && out_features >= 1 &&
              out_features <= limits::kMaxWidth && n_expert >= 1 &&
              n_expert <= limits::kMaxExperts,
          Status::kInvalidArgument,
          fmt::format("synth: shape {} is outside the limits (widths 1 to {}, experts 1 to {})",
                      shape, limits::kMaxWidth, limits::kMaxExperts));
  require(in_features % info->block_values == 0, Status::kInvalidArgument,
          fmt::format("synth: shape {} does not fit {} blocks of {}", shape, info->name,
                      info->block_values));
  // Each factor is below 2^21 and the block count below 2^60: only the byte product can overflow.
  const auto blocks = static_cast<uint64_t>(in_features / info->block_values) *
                      static_cast<uint64_t>(out_features) * static_cast<uint64_t>(n_expert);
  uint64_t bytes = 0;
  require(!__builtin_mul_overflow(blocks, uint64_t{info->block_bytes}, &bytes) &&
              bytes <= limits::kMaxSyntheticWeightBytes,
          Status::kInvalidArgument,
          fmt::format("synth: {} tensor of shape {}: more than the limit of {} bytes",
                      info->name, shape, limits::kMaxSyntheticWeightBytes));
  return bytes;
}

uint64_t layer_bytes(int64_t d, int64_t f, int64_t n_expert, GgmlType gate_up_type,
                     GgmlType down_type) {
  const uint64_t gate = expert_tensor_bytes(gate_up_type, d, f, n_expert);
  const uint64_t down = expert_tensor_bytes(down_type, f, d, n_expert);
  const uint64_t total = 2 * gate + down;  // each is at most 2^40: no overflow
  require(total <= limits::kMaxSyntheticWeightBytes, Status::kInvalidArgument,
          fmt::format("synth: layer d={} f={} E={} needs {} bytes, more than the limit of {}", d,
                      f, n_expert, total, limits::kMaxSyntheticWeightBytes));
  return total;
}

bool synth_supports(GgmlType type) {
  return layout_of(type) != nullptr && find_block_format(type) != nullptr;
}

std::vector<uint8_t> random_expert_tensor(GgmlType type, int64_t in_features, int64_t out_features,
                                          int64_t n_expert, double target_rms, uint64_t seed) {
  const FormatInfo* info = find_block_format(type);
  const ScaleLayout* layout = layout_of(type);
  require(info != nullptr && layout != nullptr, Status::kUnsupported,
          fmt::format("synth: no random block generator for type {}", ggml_type_name(type)));
  const uint64_t tensor_bytes = expert_tensor_bytes(type, in_features, out_features, n_expert);
  // Calibrate: the decoded RMS at nominal scale 1, then scale so the values have target_rms.
  constexpr int kProbeBlocks = 64;
  std::vector<uint8_t> probe(static_cast<size_t>(kProbeBlocks * info->block_bytes));
  std::vector<float> values(static_cast<size_t>(info->block_values));
  Rng probe_rng(seed ^ 0xC0FFEEull);
  fill_blocks(probe.data(), kProbeBlocks, info->block_bytes, *layout, 1.0, probe_rng);
  double sum_sq = 0.0;
  for (int b = 0; b < kProbeBlocks; ++b) {
    info->decode(probe.data() + b * info->block_bytes, values.data());
    for (float v : values) sum_sq += double{v} * v;
  }
  const double probe_rms = std::sqrt(sum_sq / (kProbeBlocks * info->block_values));
  const double s = probe_rms > 0.0 ? target_rms / probe_rms : 1.0;

  const int64_t blocks_per_expert = in_features / info->block_values * out_features;
  std::vector<uint8_t> out = allocate_or_fail<uint8_t>(
      static_cast<size_t>(tensor_bytes),
      fmt::format("synth: {} tensor [{}, {}, {}]", info->name, in_features, out_features, n_expert));
  // One generator per expert: the bytes do not depend on the thread count.
#pragma omp parallel for schedule(static) if (out.size() >= (size_t{1} << 20))
  for (int64_t e = 0; e < n_expert; ++e) {
    Rng rng(seed * 0x100000001B3ull + static_cast<uint64_t>(e) * 0x9E3779B97F4A7C15ull + 1);
    fill_blocks(out.data() + e * blocks_per_expert * info->block_bytes, blocks_per_expert,
                info->block_bytes, *layout, s, rng);
  }
  return out;
}

SyntheticLayer make_layer(const LayerSpec& spec) {
  layer_bytes(spec.d, spec.f, spec.n_expert, spec.gate_type, spec.down_type);
  expert_tensor_bytes(spec.up_type, spec.d, spec.f, spec.n_expert);
  SyntheticLayer layer;
  const auto build = [&](std::vector<uint8_t>& storage, const char* name, GgmlType type, int64_t in,
                         int64_t out, double rms, uint64_t salt) {
    std::vector<uint8_t> body =
        random_expert_tensor(type, in, out, spec.n_expert, rms, spec.seed * 31 + salt);
    storage.assign(2, 0);  // the 2-byte misalignment
    storage.insert(storage.end(), body.begin(), body.end());
    return make_expert_tensor(name, type, storage.data() + 2, in, out, spec.n_expert);
  };
  layer.weights.d = spec.d;
  layer.weights.f = spec.f;
  layer.weights.n_expert = spec.n_expert;
  // Pre-activations of RMS ~1 for x of RMS ~1; down gains 2 because h = silu(g)*u has RMS ~0.5.
  const double gate_rms = 1.0 / std::sqrt(static_cast<double>(spec.d));
  const double down_rms = 2.0 / std::sqrt(static_cast<double>(spec.f));
  layer.weights.gate =
      build(layer.gate_bytes, "synth.ffn_gate_exps", spec.gate_type, spec.d, spec.f, gate_rms, 1);
  layer.weights.up =
      build(layer.up_bytes, "synth.ffn_up_exps", spec.up_type, spec.d, spec.f, gate_rms, 2);
  layer.weights.down =
      build(layer.down_bytes, "synth.ffn_down_exps", spec.down_type, spec.f, spec.d, down_rms, 3);
  validate_layer(layer.weights);
  return layer;
}

namespace {

void check_routing_args(int64_t n_tokens, int64_t n_expert, int k) {
  require(n_tokens >= 1 && n_expert >= 1 && k >= 1 && k <= n_expert, Status::kInvalidArgument,
          fmt::format("synth routing: T={} E={} k={} out of range", n_tokens, n_expert, k));
  // Bounded E keeps the popularity table's steps resolvable in double precision: draws of
  // distinct experts terminate.
  limits::require_in_range("synth routing: E", n_expert, 1, limits::kMaxExperts);
  limits::require_in_range("synth routing: k", k, 1, limits::kMaxExpertsPerToken);
  limits::require_in_range("synth routing: T", n_tokens, 1, limits::kMaxTokens);
  limits::checked_product("synth routing: T x k", n_tokens, k, limits::kMaxPairs);
}

// k distinct experts drawn from a cumulative popularity table, weights random positive, sum 1.
Routing draw_routing(int64_t n_tokens, int k, const std::vector<double>& cumulative,
                     uint64_t seed) {
  Routing r;
  r.k = k;
  resize_or_fail(r.ids, static_cast<size_t>(n_tokens * k), "synth routing: ids");
  resize_or_fail(r.weights, r.ids.size(), "synth routing: weights");
  Rng rng(seed);
  const double total = cumulative.back();
  for (int64_t t = 0; t < n_tokens; ++t) {
    int32_t* ids = r.ids.data() + t * k;
    for (int j = 0; j < k;) {
      const double u = rng.uniform() * total;
      const auto e = static_cast<int32_t>(
          std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
      if (e >= static_cast<int32_t>(cumulative.size()) || std::find(ids, ids + j, e) != ids + j)
        continue;
      if (e > 0 && cumulative[e] == cumulative[e - 1]) continue;  // an empty expert
      ids[j++] = e;
    }
    float* w = r.weights.data() + t * k;
    double sum = 0.0;
    for (int j = 0; j < k; ++j) {
      w[j] = static_cast<float>(std::exp(1.5 * rng.normal()));
      sum += w[j];
    }
    for (int j = 0; j < k; ++j) w[j] = static_cast<float>(w[j] / sum);
    // Descending weights, ids permuted with them (the router's order).
    std::vector<int> order(static_cast<size_t>(k));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });
    std::vector<int32_t> ids_sorted(static_cast<size_t>(k));
    std::vector<float> w_sorted(static_cast<size_t>(k));
    for (int j = 0; j < k; ++j) {
      ids_sorted[j] = ids[order[j]];
      w_sorted[j] = w[order[j]];
    }
    std::copy(ids_sorted.begin(), ids_sorted.end(), ids);
    std::copy(w_sorted.begin(), w_sorted.end(), w);
  }
  return r;
}

}  // namespace

Routing skewed_routing(int64_t n_tokens, int64_t n_expert, int k, uint64_t seed) {
  check_routing_args(n_tokens, n_expert, k);
  Rng rng(seed ^ 0x5EEDull);
  std::vector<int64_t> rank(static_cast<size_t>(n_expert));
  std::iota(rank.begin(), rank.end(), 0);
  for (int64_t i = n_expert - 1; i > 0; --i)
    std::swap(rank[i], rank[static_cast<int64_t>(rng.next() % (i + 1))]);
  // The least popular tenth gets nothing, as long as k experts remain.
  const int64_t n_empty = std::min<int64_t>(n_expert / 10, n_expert - k);
  std::vector<double> cumulative(static_cast<size_t>(n_expert));
  double total = 0.0;
  for (int64_t e = 0; e < n_expert; ++e) {
    if (rank[e] < n_expert - n_empty)
      total += 1.0 / std::pow(static_cast<double>(rank[e] + 1), 1.1);
    cumulative[e] = total;
  }
  return draw_routing(n_tokens, k, cumulative, seed);
}

Routing uniform_routing(int64_t n_tokens, int64_t n_expert, int k, uint64_t seed) {
  check_routing_args(n_tokens, n_expert, k);
  std::vector<double> cumulative(static_cast<size_t>(n_expert));
  std::iota(cumulative.begin(), cumulative.end(), 1.0);
  return draw_routing(n_tokens, k, cumulative, seed);
}

Routing single_expert_routing(int64_t n_tokens, int64_t n_expert, int k, uint64_t seed) {
  check_routing_args(n_tokens, n_expert, k);
  std::vector<double> cumulative(static_cast<size_t>(n_expert));
  for (int64_t e = 0; e < n_expert; ++e)
    cumulative[e] = static_cast<double>(std::min<int64_t>(e + 1, k));
  return draw_routing(n_tokens, k, cumulative, seed);
}

std::vector<float> random_activations(int64_t n_tokens, int64_t d, uint64_t seed) {
  require(n_tokens >= 1 && d >= 1, Status::kInvalidArgument, "synth activations: empty shape");
  limits::checked_product("synth activations: T x d", n_tokens, d, limits::kMaxActivationValues);
  Rng rng(seed);
  std::vector<double> channel_scale(static_cast<size_t>(d));
  for (auto& s : channel_scale) s = std::exp(0.5 * rng.normal());
  // A few outlier channels with a fixed sign, as in real residual streams.
  constexpr int kOutliers = 4;
  std::vector<int64_t> outlier(kOutliers);
  std::vector<double> outlier_value(kOutliers);
  for (int i = 0; i < kOutliers; ++i) {
    outlier[i] = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(d));
    outlier_value[i] = (6.0 + 14.0 * rng.uniform()) * (rng.uniform() < 0.5 ? -1.0 : 1.0);
  }
  std::vector<float> x =
      allocate_or_fail<float>(static_cast<size_t>(n_tokens * d), "synth activations [T, d]");
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t c = 0; c < d; ++c) {
      double chi2 = 0.0;  // Student-t with 5 degrees of freedom
      for (int i = 0; i < 5; ++i) {
        const double z = rng.normal();
        chi2 += z * z;
      }
      x[t * d + c] =
          static_cast<float>(channel_scale[c] * rng.normal() / std::sqrt(chi2 / 5.0) * 0.7);
    }
    for (int i = 0; i < kOutliers; ++i)
      x[t * d + outlier[i]] = static_cast<float>(outlier_value[i] * (0.75 + 0.5 * rng.uniform()));
  }
  return x;
}

}  // namespace strata::synth
