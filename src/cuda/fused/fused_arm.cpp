#include "cuda/fused/fused_arm.hpp"

#include <string>

#include "common/env.hpp"
#include "common/error.hpp"
#include "cuda/blocks/layer_product_args.hpp"
#include "cuda/fused/gate_up_swiglu.hpp"
#include "cuda/fused/tile_config.hpp"
#include "cuda/production/grouped_gemm.hpp"
#include "formats/registry.hpp"

namespace strata::cuda::fused {
namespace {

bool gate_up_carried(GgmlType type) {
  return visit_format<FusedGateUpFormats>(type, [](auto) {});
}

bool down_carried(GgmlType type) {
  return production::carries(type);
}

// STRATA_PF_FUSED_TILE=small|large forces a tile configuration (tests, tuning): speed only.
FusedTileKind tile_for_run(double mean_pairs) {
  if (env_equals("STRATA_PF_FUSED_TILE", "small")) return FusedTileKind::kSmall;
  if (env_equals("STRATA_PF_FUSED_TILE", "large")) return FusedTileKind::kLarge;
  return fused_tile_for(mean_pairs);
}

}  // namespace

int fused_tile_pairs(FusedTileKind kind) {
  return kind == FusedTileKind::kSmall ? FusedSmall::kPairs : FusedLarge::kPairs;
}

FusedTileKind fused_tile_for(double mean_pairs) {
  return mean_pairs < kFusedSmallTileMeanPairs ? FusedTileKind::kSmall : FusedTileKind::kLarge;
}

bool fused_supports(const MoeLayerWeights& layer) {
  return layer.gate.type == layer.up.type && gate_up_carried(layer.gate.type) && down_carried(layer.down.type) &&
         layer.d % 64 == 0 && layer.f % 32 == 0;
}

void run_gate_up(const MoeLayerWeights& layer, const int8_t* x_codes, const float* x_scales,
                 const DeviceGroupingTables& grouping, int64_t n_pairs, DeviceBuffer<int32_t>& tile_offsets,
                 const GateUpOutputs& out, cudaStream_t stream) {
  require(fused_supports(layer), Status::kInternal, "fused gate/up: layer not covered (the registry was not asked)");
  const FusedTileKind tile = tile_for_run(static_cast<double>(n_pairs) / static_cast<double>(layer.n_expert));
  tile_offsets.reserve(static_cast<size_t>(layer.n_expert) + 1);
  launch_tile_offsets(grouping.expert_offsets, layer.n_expert, fused_tile_pairs(tile), tile_offsets.get(), stream);

  const blocks::ProductArgs args =
      blocks::gate_up_product_args(layer, x_codes, x_scales, grouping, tile_offsets.get(), out);
  const bool found = visit_format<FusedGateUpFormats>(layer.gate.type, [&](auto tag) {
    launch_fused_gate_up<typename decltype(tag)::Format>(args, tile, stream);
  });
  require(found, Status::kInternal, "fused gate/up: format lost between selection and launch");
}

}  // namespace strata::cuda::fused
