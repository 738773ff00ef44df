#include "cuda/fused_hopper/hopper_arm.hpp"

#include <string>

#include "common/env.hpp"
#include "common/error.hpp"
#include "cuda/blocks/layer_product_args.hpp"
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
  const ProductArgs gu = blocks::gate_up_product_args(layer, x_codes, x_scales, grouping, tile_offsets.get(), out);
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
  const ProductArgs dn =
      blocks::down_product_args(layer, h.h_codes, h.h_scales, grouping, tile_offsets.get(), down_rows);
  const bool found = visit_format<HopperDownFormats>(layer.down.type, [&](auto tag) {
    launch_hopper_down<typename decltype(tag)::Format>(dn, tile, stream);
  });
  require(found, Status::kInternal, "fused-hopper down: format lost between selection and launch");
}

}  // namespace strata::cuda::fused_hopper
