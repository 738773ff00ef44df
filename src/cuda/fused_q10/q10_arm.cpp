#include "cuda/fused_q10/q10_arm.hpp"

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "common/env.hpp"
#include "common/error.hpp"
#include "cuda/fused_hopper/hopper_arm.hpp"
#include "cuda/fused_q10/hopper_q10_products.hpp"
#include "cuda/fused_q10/q10_formats.hpp"
#include "cuda/fused_q10/q10_products.hpp"
#include "cuda/fused_q10/tile_config.hpp"
#include "cuda/fused_q10/wmma_q10_products.hpp"
#include "cuda/fused_wmma/wmma_arm.hpp"
#include "cuda/pipeline/combine.hpp"
#include "cuda/pipeline/quantize_rows_q10.hpp"
#include "formats/registry.hpp"
#include "pipeline/arith_q10.hpp"

namespace strata::cuda::fused_q10 {
namespace {

bool gate_up_carried(GgmlType type) {
  return visit_format<Q10GateUpFormats>(type, [](auto) {});
}

bool down_carried(GgmlType type) {
  return visit_format<Q10DownFormats>(type, [](auto) {});
}

// Values per block of a format the q10 kernels carry (0 for any other type).
int format_block_values(GgmlType type) {
  int values = 0;
  visit_format<Q10GateUpFormats>(type, [&](auto tag) {
    values = decltype(tag)::Format::kBlockValues;
  });
  return values;
}

// Whether a kernel family's per-role trait holds for the layer's gate/up and down formats.
template <template <class> class GateUp, template <class> class Down>
bool family_carries(const MoeLayerWeights& layer) {
  bool gate_up = false, down = false;
  visit_format<Q10GateUpFormats>(layer.gate.type, [&](auto tag) {
    gate_up = GateUp<typename decltype(tag)::Format>::value;
  });
  visit_format<Q10DownFormats>(layer.down.type, [&](auto tag) {
    down = Down<typename decltype(tag)::Format>::value;
  });
  return gate_up && down && layer.gate.type == layer.up.type;
}

template <class F>
struct WmmaGateUp : std::bool_constant<kWmmaQ10GateUpCarries<F>> {};
template <class F>
struct WmmaDown : std::bool_constant<kWmmaQ10DownCarries<F>> {};

// STRATA_PF_FUSED_TILE=small|large forces a tile configuration (tests, tuning): speed only.
std::optional<Q10TileKind> forced_tile() {
  if (env_equals("STRATA_PF_FUSED_TILE", "small")) return Q10TileKind::kSmall;
  if (env_equals("STRATA_PF_FUSED_TILE", "large")) return Q10TileKind::kLarge;
  return std::nullopt;
}

Q10TileKind tile_for_run(double mean_pairs) {
  return forced_tile().value_or(q10_tile_for(mean_pairs));
}

// The same run for the wmma kernels: their arguments carry f16 codes as raw bits (no GPU header).
WmmaQ10Args wmma_args(const Q10ProductArgs& a) {
  WmmaQ10Args w;
  for (int t = 0; t < 2; ++t) {
    w.weights[t] = a.weights[t];
    w.expert_stride_bytes[t] = a.expert_stride_bytes[t];
  }
  w.row_bytes = a.row_bytes;
  w.in_features = a.in_features;
  w.out_features = a.out_rows;
  w.act_codes = reinterpret_cast<const uint16_t*>(a.act_codes);
  w.act_scales = a.act_scales;
  w.act_row = a.pair_token;
  w.expert_offsets = a.expert_offsets;
  w.tile_offsets = a.tile_offsets;
  w.n_expert = a.n_expert;
  w.h_codes = reinterpret_cast<uint16_t*>(a.h_codes);
  w.h_scales = a.h_scales;
  w.h_sums = a.h_sums;
  w.h_out = a.h_out;
  w.gate_out = a.gate_out;
  w.up_out = a.up_out;
  w.rows_out = a.down_out;
  return w;
}

std::atomic<uint64_t> raw_tma_launches{0};  // hopper_q10_raw_tma_launches()
std::atomic<uint64_t> staged_launches{0};   // q10_staged_launches()

}  // namespace

bool hopper_q10_raw_tma_allowed() { return !env_equals("STRATA_Q10_RAW_COPY", "rows"); }
int hopper_q10_act_group() {
  const char* value = std::getenv("STRATA_Q10_ACT_GROUP");
  if (value == nullptr || *value == '\0') return kHopperQ10ActGroup;
  int group = 0;
  const char* end = value + std::strlen(value);
  const auto [at, ec] = std::from_chars(value, end, group);
  if (ec != std::errc() || at != end || group < 1 || group > 64)
    throw Error(Status::kInvalidArgument,
                std::string("STRATA_Q10_ACT_GROUP='") + value + "': expected an integer from 1 to 64");
  return group;
}
void count_hopper_q10_raw_tma_launch() { raw_tma_launches.fetch_add(1, std::memory_order_relaxed); }
uint64_t hopper_q10_raw_tma_launches() { return raw_tma_launches.load(std::memory_order_relaxed); }
bool q10_staged_allowed() { return !env_equals("STRATA_Q10_SM80_RAW", "direct"); }
void count_q10_staged_launch() { staged_launches.fetch_add(1, std::memory_order_relaxed); }
uint64_t q10_staged_launches() { return staged_launches.load(std::memory_order_relaxed); }

int hopper_q10_tile_pairs(double mean_pairs_per_expert) {
  const Q10TileKind kind = forced_tile().value_or(
      mean_pairs_per_expert < kHopperQ10LargeTileMeanPairs ? Q10TileKind::kSmall : Q10TileKind::kLarge);
  return kind == Q10TileKind::kSmall ? 64 : 128;
}

// Down on the 64-pair tile below this mean where gate/up runs the 128-pair one, for the down formats
// that measured faster there: the 64-pair tile moves each pair's h codes to half as many CTAs and pads
// an expert's last tile less, but decodes each weight for half as many pairs. Down alone, µs (H100,
// IQ3_S gate/up, bench/results/2026-12-07.md, call 74): at a mean of 128 (qwen35-a3b, T = 4096) Q2_0
// 430 -> 401, Q4_K 667 -> 648, while Q6_K 627 -> 721, IQ4_NL 494 -> 521, IQ4_XS 482 -> 520, MXFP4
// 492 -> 517 and Q8_0 489 -> 496 are slower; at 256 (T = 8192; qwen3-30b, T = 4096) Q2_0 is within
// 1 % (731 -> 724, 545 -> 543), and at 512 (T = 16384, call 73) 2.5 % slower.
constexpr double kHopperQ10DownSmallTileMeanPairs = 192.0;

int hopper_q10_down_tile_pairs(double mean_pairs_per_expert, GgmlType down) {
  const int gate_up = hopper_q10_tile_pairs(mean_pairs_per_expert);
  if (forced_tile().has_value() || gate_up == 64) return gate_up;
  const bool faster_small = down == GgmlType::Q2_0 || down == GgmlType::Q4_K;  // measured: above
  return faster_small && mean_pairs_per_expert < kHopperQ10DownSmallTileMeanPairs ? 64 : gate_up;
}

bool q10_hopper_supports(const MoeLayerWeights& layer) {
  return q10_fused_supports(layer) && layer.d % 64 == 0 && layer.f % 64 == 0 &&
         layer.gate.row_bytes == layer.up.row_bytes;
}

bool q10_wmma_supports(const MoeLayerWeights& layer) {
  return q10_fused_supports(layer) && family_carries<WmmaGateUp, WmmaDown>(layer) &&
         layer.d % 64 == 0 && layer.f % 64 == 0;
}

bool use_q10_hopper(const MoeLayerWeights& layer) {
  return fused_hopper::hopper_available() && q10_hopper_supports(layer);
}

int q10_tile_pairs(Q10TileKind kind) {
  return kind == Q10TileKind::kSmall ? Q10Small::kPairs : Q10Large::kPairs;
}

Q10TileKind q10_tile_for(double mean_pairs) {
  return mean_pairs < kQ10SmallTileMeanPairs ? Q10TileKind::kSmall : Q10TileKind::kLarge;
}

bool q10_fused_supports(const MoeLayerWeights& layer) {
  if (layer.gate.type != layer.up.type || !gate_up_carried(layer.gate.type) ||
      !down_carried(layer.down.type))
    return false;
  // d: gate/up rows are whole blocks; f: down rows are whole blocks and h is whole 32-value
  // sub-blocks (an f % 64 == 32 row ends in the short activation block of the q10 rule).
  return layer.d > 0 && layer.f > 0 && layer.d % format_block_values(layer.gate.type) == 0 &&
         layer.d % 32 == 0 && layer.f % format_block_values(layer.down.type) == 0 &&
         layer.f % 32 == 0 && layer.gate.row_bytes == layer.up.row_bytes;
}

std::string q10_fused_refusal(const MoeLayerWeights& layer) {
  const std::string gate(ggml_type_name(layer.gate.type)), up(ggml_type_name(layer.up.type)),
      down(ggml_type_name(layer.down.type));
  const std::string what = "the q10 fused arm does not carry gate " + gate + " / up " + up +
                           " / down " + down + " with d = " + std::to_string(layer.d) +
                           ", f = " + std::to_string(layer.f) + " ('" + layer.gate.name + "'): ";
  if (layer.gate.type != layer.up.type)
    return what + "gate and up must share one format, as in GGUF files";
  if (!gate_up_carried(layer.gate.type) || !down_carried(layer.down.type))
    return what + "type " + (gate_up_carried(layer.gate.type) ? down : gate) +
           " is not one of the 25 block formats it carries (q10_formats.hpp)";
  return what + "d must be a multiple of 32 and of the gate/up block (" +
         std::to_string(format_block_values(layer.gate.type)) +
         " values), f a multiple of 32 and of the down block (" +
         std::to_string(format_block_values(layer.down.type)) + " values)";
}

void Q10Workspace::reserve(int64_t n_tokens, int64_t n_pairs, int64_t d, int64_t f,
                           int64_t n_expert) {
  const auto T = static_cast<size_t>(n_tokens), P = static_cast<size_t>(n_pairs);
  x_codes_.reserve(T * d);
  x_scales_.reserve(T * q10_blocks_per_row(d));
  x_sums_.reserve(T * d / kQ10SumValues);
  h_codes_.reserve(P * f);
  h_scales_.reserve(P * q10_blocks_per_row(f));
  h_sums_.reserve(P * f / kQ10SumValues);
  if (keep_h) {
    gate_.reserve(P * f);
    up_.reserve(P * f);
    h_.reserve(P * f);
  }
  down_.reserve(P * d);
  down_tile_offsets_.reserve(static_cast<size_t>(n_expert) + 1);
  grouping_.reserve(n_pairs, n_expert);
}

void run_layer_q10(const MoeLayerWeights& layer, const DeviceInputs& in, Q10Workspace& ws,
                   cudaStream_t stream, float* y, Q10Kernels kernels) {
  validate_layer(layer);
  require(q10_fused_supports(layer), Status::kUnsupported, q10_fused_refusal(layer));
  require(in.n_tokens >= 0, Status::kInvalidArgument, "n_tokens: negative");
  require(in.k >= 1 && in.k <= layer.n_expert, Status::kInvalidArgument,
          "k: " + std::to_string(in.k) + " (must be in [1, E = " + std::to_string(layer.n_expert) +
              "])");
  require(in.n_tokens * in.k < (int64_t{1} << 31), Status::kInvalidArgument,
          "n_tokens * k: must fit in int32");
  require(layer.d <= (int64_t{1} << 30) && layer.f <= (int64_t{1} << 30), Status::kInvalidArgument,
          "layer: d and f must fit in int32");
  if (in.n_tokens == 0) return;
  require(in.x != nullptr && in.ids != nullptr && in.weights != nullptr && y != nullptr,
          Status::kInvalidArgument, "x, ids, weights, y: null device pointer");
  require(reinterpret_cast<uintptr_t>(in.x) % 16 == 0, Status::kInvalidArgument,
          "x: not 16-byte aligned");

  const int64_t T = in.n_tokens, d = layer.d, f = layer.f, E = layer.n_expert;
  const int64_t P = T * in.k;
  ws.reserve(T, P, d, f, E);
  const Q10TileKind tile = tile_for_run(static_cast<double>(P) / static_cast<double>(E));
  // The family the caller chose: the 16x16x16 f16 tile kernels (wmma_q10_kernel.cuh), the Hopper
  // kernels (bulk copies + wgmma f16) or the mma.sync ones: the same bits.
  // NOTE: every kernel copies whole 16-byte pieces of activation rows: the code buffers are
  // cudaMalloc'd and rows of d or f f16 codes (multiples of 32) keep every row start 16-byte
  // aligned.
  const bool wmma = kernels == Q10Kernels::kWmma;
  const bool hopper = kernels == Q10Kernels::kHopper;
  require(!hopper || use_q10_hopper(layer), Status::kUnsupported,
          "the q10 fused-hopper kernels do not carry the layer here (q10_hopper_supports, an sm_90 "
          "device and the build's sm_90a image)");
  require(!wmma || q10_wmma_supports(layer), Status::kUnsupported,
          "the q10 fused-wmma kernels do not carry the layer (q10_wmma_supports)");
  const double mean_pairs = static_cast<double>(P) / static_cast<double>(E);
  const int hopper_pairs = hopper_q10_tile_pairs(mean_pairs);
  const int hopper_down_pairs = hopper_q10_down_tile_pairs(mean_pairs, layer.down.type);

  // ---- quantise x once per token (f16 codes per 64) ----------------------------------------
  launch_quantize_rows_q10(in.x, T, d, ws.x_codes_.get(), ws.x_scales_.get(), ws.x_sums_.get(),
                           stream);
  // ---- group the pairs by expert; tile offsets of gate/up's tile (and of down's, where the Hopper
  // down kernel runs another) -----------------------------------------------------------------------
  const DeviceGroupingTables g =
      launch_group_by_expert(in.ids, T, in.k, E,
                             wmma     ? kWmmaQ10TilePairs
                             : hopper ? hopper_pairs
                                      : q10_tile_pairs(tile),
                             ws.grouping_, stream);
  const bool own_down_tile = hopper && hopper_down_pairs != hopper_pairs;
  if (own_down_tile)
    launch_tile_offsets(g.expert_offsets, E, hopper_down_pairs, ws.down_tile_offsets_.get(), stream);

  Q10ProductArgs base;
  base.pair_token = g.pair_token;
  base.expert_offsets = g.expert_offsets;
  base.tile_offsets = g.tile_offsets;
  base.n_expert = static_cast<int>(E);
  // ---- gate/up + SwiGLU + h requantised per 64 features ---------------------------------------
  Q10ProductArgs gu = base;
  gu.weights[0] = layer.gate.data;
  gu.weights[1] = layer.up.data;
  gu.expert_stride_bytes[0] = layer.gate.expert_stride_bytes;
  gu.expert_stride_bytes[1] = layer.up.expert_stride_bytes;
  gu.row_bytes = layer.gate.row_bytes;
  gu.in_features = static_cast<int>(d);
  gu.out_rows = static_cast<int>(f);
  gu.act_codes = ws.x_codes_.get();
  gu.act_scales = ws.x_scales_.get();
  gu.act_sums = ws.x_sums_.get();
  gu.h_codes = ws.h_codes_.get();
  gu.h_scales = ws.h_scales_.get();
  gu.h_sums = ws.h_sums_.get();
  gu.h_out = ws.keep_h ? ws.h_.get() : nullptr;
  gu.gate_out = ws.keep_h ? ws.gate_.get() : nullptr;
  gu.up_out = ws.keep_h ? ws.up_.get() : nullptr;
  bool found = visit_format<Q10GateUpFormats>(layer.gate.type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    if constexpr (kWmmaQ10GateUpCarries<F>) {
      if (wmma) return launch_wmma_q10_gate_up<F>(wmma_args(gu), stream);
    }
    if (hopper) {
      HopperQ10Args h;
      h.p = gu;
      h.weights_end[0] = layer.gate.end();
      h.weights_end[1] = layer.up.end();
      return launch_hopper_q10_gate_up<F>(h, hopper_pairs, stream);
    }
    launch_q10_gate_up<F>(gu, tile, stream);
  });
  require(found, Status::kInternal, "q10 gate/up: format lost between validation and launch");
  // ---- down: h rows are already in sorted-pair order ------------------------------------------
  Q10ProductArgs dn = base;
  dn.pair_token = nullptr;
  if (own_down_tile) dn.tile_offsets = ws.down_tile_offsets_.get();
  dn.weights[0] = layer.down.data;
  dn.expert_stride_bytes[0] = layer.down.expert_stride_bytes;
  dn.row_bytes = layer.down.row_bytes;
  dn.in_features = static_cast<int>(f);
  dn.out_rows = static_cast<int>(d);
  dn.act_codes = ws.h_codes_.get();
  dn.act_scales = ws.h_scales_.get();
  dn.act_sums = ws.h_sums_.get();
  dn.down_out = ws.down_.get();
  found = visit_format<Q10DownFormats>(layer.down.type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    if constexpr (kWmmaQ10DownCarries<F>) {
      if (wmma) return launch_wmma_q10_down<F>(wmma_args(dn), stream);
    }
    if (hopper) {
      HopperQ10Args h;
      h.p = dn;
      h.weights_end[0] = layer.down.end();
      return launch_hopper_q10_down<F>(h, hopper_down_pairs, stream);
    }
    launch_q10_down<F>(dn, tile, stream);
  });
  require(found, Status::kInternal, "q10 down: format lost between validation and launch");
  // ---- combine in slot order (the q8 combine: q10 changes no step of it) ----------------------
  launch_combine(ws.down_.get(), g.slot_to_pair, in.weights, T, in.k, d, y, stream);

  ws.view_ = Q10WorkspaceView{ws.x_codes_.get(),
                              ws.x_scales_.get(),
                              ws.x_sums_.get(),
                              g,
                              ws.h_codes_.get(),
                              ws.h_scales_.get(),
                              ws.h_sums_.get(),
                              ws.keep_h ? ws.gate_.get() : nullptr,
                              ws.keep_h ? ws.up_.get() : nullptr,
                              ws.keep_h ? ws.h_.get() : nullptr,
                              ws.down_.get(),
                              P};
}

}  // namespace strata::cuda::fused_q10
