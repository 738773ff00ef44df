// Views of one MoE layer's expert weights (host or device memory; never owned here).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/ggml_type.hpp"

namespace strata {

// One stacked expert tensor: n_expert matrices of out_features rows x in_features values, each
// row a run of blocks. expert_stride_bytes lets gate and up views share a merged gate_up tensor.
struct ExpertTensor {
  std::string name;               // tensor name, for messages
  GgmlType type = GgmlType::F32;
  const uint8_t* data = nullptr;  // first row of expert 0 (2-byte alignment is enough)
  int64_t in_features = 0;        // ne0: values per row
  int64_t out_features = 0;       // ne1: rows per expert
  int64_t n_expert = 0;           // ne2
  size_t row_bytes = 0;           // in_features / block_values * block_bytes
  size_t expert_stride_bytes = 0; // bytes from expert e to e+1

  const uint8_t* row(int64_t expert, int64_t r) const {
    return data + static_cast<size_t>(expert) * expert_stride_bytes + static_cast<size_t>(r) * row_bytes;
  }
};

// h = silu(x Wg_e) * (x Wu_e), y_e = h Wd_e.  gate/up: [d -> f], down: [f -> d].
struct MoeLayerWeights {
  int64_t d = 0;         // model width
  int64_t f = 0;         // expert FFN width
  int64_t n_expert = 0;  // E
  ExpertTensor gate, up, down;
};

// Builds a view over a contiguous [ne0, ne1, ne2] block tensor, checking ne0 against the block size.
ExpertTensor make_expert_tensor(std::string name, GgmlType type, const void* data, int64_t ne0,
                                int64_t ne1, int64_t ne2);

// Throws strata::Error (naming the tensor and the reason) unless the three tensors form a
// layer: gate/up [d, f, E], down [f, d, E], block sizes dividing the rows, known formats.
void validate_layer(const MoeLayerWeights& layer);

}  // namespace strata
