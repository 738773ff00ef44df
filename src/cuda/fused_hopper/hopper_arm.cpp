#include "cuda/fused_hopper/hopper_arm.hpp"

#include <string>

#include "common/env.hpp"
#include "common/error.hpp"
#include "cuda/fused_hopper/hopper_products.hpp"
#include "cuda/fused_hopper/tile_config.hpp"
#include "formats/registry.hpp"

namespace strata::cuda::fused_hopper {
namespace {

template <class List>
bool carried(GgmlType type) {
  return visit_format<List>(type, [](auto) {});
}

// STRATA_PF_FUSED_TILE=small|large forces a tile configuration (tests, tuning): speed only.
HopperTileKind tile_for_run(double mean_pairs) {
  if (env_equals("STRATA_PF_FUSED_TILE", "small")) return HopperTileKind::kSmall;
  if (env_equals("STRATA_PF_FUSED_TILE", "large")) return HopperTileKind::kLarge;
  return mean_pairs < kHopperSmallTileMeanPairs ? HopperTileKind::kSmall : HopperTileKind::kLarge;
}

double mean_pairs(const MoeLayerWeights& layer, int64_t n_pairs) {
  return static_cast<double>(n_pairs) / static_cast<double>(layer.n_expert);
}

}  // namespace

int hopper_tile_pairs(HopperTileKind kind) {
  return kind == HopperTileKind::kSmall ? HopperSmall<Iq3S, 2, kGateUpStageValues>::kPairs
                                        : HopperLarge<Iq3S, 2, kGateUpStageValues>::kPairs;
}

bool hopper_supports(const MoeLayerWeights& layer) {
  return layer.gate.type == layer.up.type && carried<HopperGateUpFormats>(layer.gate.type) &&
         carried<HopperDownFormats>(layer.down.type) && layer.gate.row_bytes == layer.up.row_bytes &&
         layer.d % kGateUpStageValues == 0 && layer.f % kDownStageValues == 0;
}

bool hopper_down_kernel() { return env_equals("STRATA_PF_HOPPER_DOWN", "1"); }

bool hopper_available() {
  static const bool loaded = hopper_kernels_loaded();
  return loaded;
}

void run_gate_up(const MoeLayerWeights& layer, const int8_t* x_codes, const float* x_scales,
                 const DeviceGroupingTables& grouping, int64_t n_pairs,
                 DeviceBuffer<int32_t>& tile_offsets, const fused::GateUpOutputs& out, cudaStream_t stream) {
  require(hopper_supports(layer) && hopper_available(), Status::kInternal,
          "fused-hopper: layer or device not covered (the registry was not asked)");
  const HopperTileKind tile = tile_for_run(mean_pairs(layer, n_pairs));
  tile_offsets.reserve(static_cast<size_t>(layer.n_expert) + 1);
  launch_tile_offsets(grouping.expert_offsets, layer.n_expert, hopper_tile_pairs(tile), tile_offsets.get(), stream);

  require(reinterpret_cast<uintptr_t>(x_codes) % 16 == 0 && reinterpret_cast<uintptr_t>(out.h_codes) % 16 == 0,
          Status::kInternal, "fused-hopper: activation codes must be 16-byte aligned (one bulk copy per row)");
  ProductArgs gu;
  gu.weights[0] = layer.gate.data;
  gu.weights[1] = layer.up.data;
  gu.weights_end[0] = layer.gate.end();
  gu.weights_end[1] = layer.up.end();
  gu.expert_stride_bytes[0] = layer.gate.expert_stride_bytes;
  gu.expert_stride_bytes[1] = layer.up.expert_stride_bytes;
  gu.row_bytes = layer.gate.row_bytes;
  gu.in_features = static_cast<int>(layer.d);
  gu.n_tensors = 2;
  gu.out_features = static_cast<int>(layer.f);
  gu.act_codes = x_codes;
  gu.act_scales = x_scales;
  gu.pair_row = grouping.pair_token;
  gu.expert_offsets = grouping.expert_offsets;
  gu.tile_offsets = tile_offsets.get();
  gu.n_expert = static_cast<int>(layer.n_expert);
  gu.h_codes = out.h_codes;
  gu.h_scales = out.h_scales;
  gu.h_half_sums = out.h_half_sums;
  gu.h_out = out.h;
  gu.product_out[0] = out.gate;
  gu.product_out[1] = out.up;
  const bool found = visit_format<HopperGateUpFormats>(layer.gate.type, [&](auto tag) {
    launch_hopper_gate_up<typename decltype(tag)::Format>(gu, tile, stream);
  });
  require(found, Status::kInternal, "fused-hopper gate/up: format lost between selection and launch");
}

void run_down(const MoeLayerWeights& layer, const fused::GateUpOutputs& h, const DeviceGroupingTables& grouping,
              int64_t n_pairs, const DeviceBuffer<int32_t>& tile_offsets, float* down_rows, cudaStream_t stream) {
  require(hopper_supports(layer) && hopper_available(), Status::kInternal,
          "fused-hopper: layer or device not covered (the registry was not asked)");
  const HopperTileKind tile = tile_for_run(mean_pairs(layer, n_pairs));  // the tile run_gate_up() chose
  ProductArgs dn;
  dn.weights[0] = layer.down.data;
  dn.weights_end[0] = layer.down.end();
  dn.expert_stride_bytes[0] = layer.down.expert_stride_bytes;
  dn.row_bytes = layer.down.row_bytes;
  dn.in_features = static_cast<int>(layer.f);
  dn.out_features = static_cast<int>(layer.d);
  dn.act_codes = h.h_codes;
  dn.act_scales = h.h_scales;
  dn.pair_row = nullptr;  // h rows are already in sorted-pair order
  dn.expert_offsets = grouping.expert_offsets;
  dn.tile_offsets = tile_offsets.get();
  dn.n_expert = static_cast<int>(layer.n_expert);
  dn.product_out[0] = down_rows;
  const bool found = visit_format<HopperDownFormats>(layer.down.type, [&](auto tag) {
    launch_hopper_down<typename decltype(tag)::Format>(dn, tile, stream);
  });
  require(found, Status::kInternal, "fused-hopper down: format lost between selection and launch");
}

}  // namespace strata::cuda::fused_hopper
