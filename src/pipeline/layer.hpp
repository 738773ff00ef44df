// Views of one MoE layer's expert weights (host or device memory; never owned here).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/ggml_type.hpp"
#include "pipeline/activation.hpp"

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
  // Bytes from the first row to one past the last byte any row of the view reaches (a merged
  // gate_up view spans only its own rows of each expert, so stride x E would run past the tensor).
  size_t span_bytes() const {
    return static_cast<size_t>(n_expert - 1) * expert_stride_bytes + static_cast<size_t>(out_features) * row_bytes;
  }
  const uint8_t* end() const { return data + span_bytes(); }
};

// h = act(x Wg_e + bg_e, x Wu_e + bu_e), y_e = h Wd_e + bd_e.  gate/up: [d -> f], down: [f -> d].
// Without biases and with the default activation this is the plain SwiGLU expert.
struct MoeLayerWeights {
  int64_t d = 0;         // model width
  int64_t f = 0;         // expert FFN width
  int64_t n_expert = 0;  // E
  ExpertTensor gate, up, down;
  // Optional per-expert biases (gpt-oss), f32, each added right after its product's fold.
  const float* gate_bias = nullptr;  // [E, f]
  const float* up_bias = nullptr;    // [E, f]
  const float* down_bias = nullptr;  // [E, d]
  Activation activation;

  bool has_biases() const { return gate_bias || up_bias || down_bias; }
  // The plain SwiGLU expert every backend carries (no biases, the default activation).
  bool is_plain() const { return !has_biases() && activation.kind == ActivationKind::kSwiGLU; }
};

// Builds a view over a contiguous [ne0, ne1, ne2] block tensor, checking ne0 against the block size.
ExpertTensor make_expert_tensor(std::string name, GgmlType type, const void* data, int64_t ne0,
                                int64_t ne1, int64_t ne2);

// Throws strata::Error (naming the tensor and the reason) unless the three tensors form a
// layer: gate/up [d, f, E], down [f, d, E], block sizes dividing the rows, known formats.
void validate_layer(const MoeLayerWeights& layer);

}  // namespace strata
