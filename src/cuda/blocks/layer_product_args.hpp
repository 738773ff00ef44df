// A layer's two grouped products as the q8 CUDA arms launch them (fused-sm80, fused-hopper,
// fused-wmma): the ProductArgs of gate/up and of down, filled from the layer's tensors, the
// activation codes and the device grouping. Each arm adds what its kernel alone reads.
#pragma once
#include <cstdint>

#include "cuda/blocks/product_args.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "pipeline/layer.hpp"

namespace strata::cuda::blocks {

// Gate in [0] and up in [1] (one format): K = d, f rows per expert and tensor; x's int8 codes per
// token (the sorted pairs read them through pair_token); tile_offsets of the launcher's pair tile;
// h requantised (and h, gate, up where not null) into `out` (fused::GateUpOutputs or
// fused_wmma::ProductOutputs: the same fields).
template <class Outputs>
ProductArgs gate_up_product_args(const MoeLayerWeights& layer, const int8_t* x_codes, const float* x_scales,
                                 const DeviceGroupingTables& grouping, const int32_t* tile_offsets,
                                 const Outputs& out) {
  ProductArgs a;
  a.weights[0] = layer.gate.data;
  a.weights[1] = layer.up.data;
  a.weights_end[0] = layer.gate.end();
  a.weights_end[1] = layer.up.end();
  a.expert_stride_bytes[0] = layer.gate.expert_stride_bytes;
  a.expert_stride_bytes[1] = layer.up.expert_stride_bytes;
  a.row_bytes = layer.gate.row_bytes;
  a.n_tensors = 2;
  a.in_features = static_cast<int>(layer.d);
  a.out_features = static_cast<int>(layer.f);
  a.act_codes = x_codes;
  a.act_scales = x_scales;
  a.pair_row = grouping.pair_token;
  a.expert_offsets = grouping.expert_offsets;
  a.tile_offsets = tile_offsets;
  a.n_expert = static_cast<int>(layer.n_expert);
  a.h_codes = out.h_codes;
  a.h_scales = out.h_scales;
  a.h_half_sums = out.h_half_sums;
  a.h_out = out.h;
  a.product_out[0] = out.gate;
  a.product_out[1] = out.up;
  return a;
}

// Down in [0]: K = f, d rows per expert; h's codes already in sorted-pair order (pair_row null);
// the f32 rows of every sorted pair into down_rows.
inline ProductArgs down_product_args(const MoeLayerWeights& layer, const int8_t* h_codes, const float* h_scales,
                                     const DeviceGroupingTables& grouping, const int32_t* tile_offsets,
                                     float* down_rows) {
  ProductArgs a;
  a.weights[0] = layer.down.data;
  a.weights_end[0] = layer.down.end();
  a.expert_stride_bytes[0] = layer.down.expert_stride_bytes;
  a.row_bytes = layer.down.row_bytes;
  a.in_features = static_cast<int>(layer.f);
  a.out_features = static_cast<int>(layer.d);
  a.act_codes = h_codes;
  a.act_scales = h_scales;
  a.pair_row = nullptr;
  a.expert_offsets = grouping.expert_offsets;
  a.tile_offsets = tile_offsets;
  a.n_expert = static_cast<int>(layer.n_expert);
  a.product_out[0] = down_rows;
  return a;
}

}  // namespace strata::cuda::blocks
