// The non-finite policy's checks (README.md, docs/numerics.md): NaN or Inf in x, in a router or
// in a weight block's scales is refused with a message naming the tensor and the element or
// block, on every backend and arm alike, before any output is written.
#pragma once
#include <cstdint>
#include <string_view>

#include "common/error.hpp"
#include "pipeline/layer.hpp"

namespace strata {

// The index of the first NaN or Inf of values[0, n), or -1.
int64_t first_non_finite(const float* values, int64_t n);

// Throws Error(status) "<what>: element [r, c] = nan is not finite" for the first non-finite
// value of a row-major [rows, cols] f32 matrix.
void require_finite_matrix(std::string_view what, const float* values, int64_t rows, int64_t cols,
                           Status status = Status::kInvalidArgument);

// The other half of the policy: finite inputs whose result overflows float32 (x near FLT_MAX, a
// huge expert_weights_scale) would give Inf or NaN; y of [rows, cols] is scanned after a run and
// the first such element refused with Error(kInvalidArgument).
void require_finite_result(const float* y, int64_t rows, int64_t cols);

// Scans every block of the layer's three tensors (host memory): each sub-block's scales and
// offsets (the factors the int8 arms multiply by) must be finite. Throws Error(kInvalidArgument)
// naming the tensor, expert, row and block of the first one that is not. Reads every block once
// (OpenMP over experts): about as long as one pass over the weights.
void require_finite_scales(const MoeLayerWeights& layer, int threads = 0);

}  // namespace strata
