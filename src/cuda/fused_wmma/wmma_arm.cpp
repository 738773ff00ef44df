#include "cuda/fused_wmma/wmma_arm.hpp"

#include <string>

#include "common/error.hpp"
#include "cuda/blocks/layer_product_args.hpp"
#include "cuda/fused_wmma/chain_ops.hpp"
#include "cuda/fused_wmma/launch_chain.hpp"
#include "cuda/pipeline/combine.hpp"
#include "cuda/pipeline/quantize_rows.hpp"
#include "formats/registry.hpp"

namespace strata::cuda::fused_wmma {

bool wmma_supports(const MoeLayerWeights& layer) {
  const bool gate_up = layer.gate.type == layer.up.type &&
                       visit_format<WmmaGateUpFormats>(layer.gate.type, [](auto) {});
  const bool down = visit_format<WmmaDownFormats>(layer.down.type, [](auto) {});
  return gate_up && down && layer.d % 32 == 0 && layer.f % 32 == 0;
}

int wmma_tile_pairs() { return chain_tile_pairs(); }

void run_products(const MoeLayerWeights& layer, const int8_t* x_codes, const float* x_scales,
                  const DeviceGroupingTables& grouping, int64_t n_pairs, const ProductOutputs& out,
                  cudaStream_t stream) {
  require(wmma_supports(layer), Status::kInternal,
          "fused-wmma: layer not covered (the registry was not asked)");
  if (n_pairs == 0) return;

  const blocks::ProductArgs gu =
      blocks::gate_up_product_args(layer, x_codes, x_scales, grouping, grouping.tile_offsets, out);
  const bool gate_up_found = visit_format<WmmaGateUpFormats>(layer.gate.type, [&](auto tag) {
    launch_chain<typename decltype(tag)::Format, GateUpOp>(gu, stream);
  });
  require(gate_up_found, Status::kInternal,
          "fused-wmma gate/up: format lost between selection and launch");

  const blocks::ProductArgs dn =
      blocks::down_product_args(layer, out.h_codes, out.h_scales, grouping, grouping.tile_offsets, out.down);
  const bool down_found = visit_format<WmmaDownFormats>(layer.down.type, [&](auto tag) {
    launch_chain<typename decltype(tag)::Format, DownOp>(dn, stream);
  });
  require(down_found, Status::kInternal,
          "fused-wmma down: format lost between selection and launch");
}

void run_layer_wmma(const MoeLayerWeights& layer, const float* x, const int32_t* ids,
                    const float* weights, int64_t n_tokens, int k, WmmaLayerWorkspace& ws,
                    cudaStream_t stream, float* y) {
  validate_layer(layer);
  require(wmma_supports(layer), Status::kUnsupported,
          "tensor '" + layer.gate.name + "': formats not carried by the CUDA fused-wmma arm");
  require(n_tokens >= 0 && k >= 1 && k <= layer.n_expert, Status::kInvalidArgument,
          "n_tokens, k: out of range");
  require(n_tokens * k < (int64_t{1} << 31), Status::kInvalidArgument,
          "n_tokens * k: must fit in int32");
  if (n_tokens == 0) return;
  const auto T = static_cast<size_t>(n_tokens), d = static_cast<size_t>(layer.d),
             f = static_cast<size_t>(layer.f);
  const size_t P = T * static_cast<size_t>(k);
  ws.x_codes.reserve(T * d);
  ws.x_scales.reserve(T * d / 32);
  ws.x_half_sums.reserve(T * d / 16);
  ws.h_codes.reserve(P * f);
  ws.h_scales.reserve(P * f / 32);
  ws.h_half_sums.reserve(P * f / 16);
  ws.down.reserve(P * d);
  if (ws.keep_intermediates) {
    ws.gate.reserve(P * f);
    ws.up.reserve(P * f);
    ws.h.reserve(P * f);
  }
  ws.grouping.reserve(static_cast<int64_t>(P), layer.n_expert);

  launch_quantize_rows(x, n_tokens, layer.d, ws.x_codes.get(), ws.x_scales.get(),
                       ws.x_half_sums.get(), stream);
  ws.tables = launch_group_by_expert(ids, n_tokens, k, layer.n_expert, chain_tile_pairs(),
                                     ws.grouping, stream);
  ProductOutputs out;
  out.h_codes = ws.h_codes.get();
  out.h_scales = ws.h_scales.get();
  out.h_half_sums = ws.h_half_sums.get();
  out.down = ws.down.get();
  if (ws.keep_intermediates) {
    out.gate = ws.gate.get();
    out.up = ws.up.get();
    out.h = ws.h.get();
  }
  run_products(layer, ws.x_codes.get(), ws.x_scales.get(), ws.tables, static_cast<int64_t>(P), out,
               stream);
  launch_combine(ws.down.get(), ws.tables.slot_to_pair, weights, n_tokens, k, layer.d, y, stream);
}

}  // namespace strata::cuda::fused_wmma
