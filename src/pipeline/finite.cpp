#include "pipeline/finite.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/error.hpp"
#include "common/threads.hpp"
#include "formats/registry.hpp"

namespace strata {

namespace {

struct BadBlock {
  int64_t row = -1;
  int64_t block = -1;
  float factor = 0.0f;
  bool found() const { return row >= 0; }
};

// True when every factor value i of the block is built from is finite. Flattened so that the
// codes decode_sub also produces, never read here, are optimised away.
template <class F>
__attribute__((flatten)) bool block_factors_finite(const uint8_t* block, float* bad_factor) {
  if constexpr (F::kInt8) {
    int8_t codes[kSubBlockValues];
    for (int sub = 0; sub < F::kBlockValues / kSubBlockValues; ++sub) {
      SubScale s{};
      F::decode_sub(block, sub, codes, s);
      for (float v : {s.scale[0], s.scale[1], s.offset[0], s.offset[1]}) {
        if (!std::isfinite(v)) {
          *bad_factor = v;
          return false;
        }
      }
    }
  } else {
    float values[F::kBlockValues];
    F::decode(block, values);
    for (float v : values) {
      if (!std::isfinite(v)) {
        *bad_factor = v;
        return false;
      }
    }
  }
  return true;
}

template <class F>
void scan_tensor(const ExpertTensor& t, int threads) {
  const int64_t blocks_per_row = t.in_features / F::kBlockValues;
  std::vector<BadBlock> first_bad(static_cast<size_t>(t.n_expert));
  const int n_threads = resolve_threads(threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads) if (t.n_expert > 1)
  for (int64_t e = 0; e < t.n_expert; ++e) {
    BadBlock& bad = first_bad[static_cast<size_t>(e)];
    for (int64_t r = 0; r < t.out_features && !bad.found(); ++r) {
      const uint8_t* row = t.row(e, r);
      for (int64_t b = 0; b < blocks_per_row; ++b) {
        float factor = 0.0f;
        if (!block_factors_finite<F>(row + b * F::kBlockBytes, &factor)) {
          bad = {r, b, factor};
          break;
        }
      }
    }
  }
  for (int64_t e = 0; e < t.n_expert; ++e) {
    const BadBlock& bad = first_bad[static_cast<size_t>(e)];
    if (bad.found())
      fail(Status::kInvalidArgument,
           fmt::format("tensor '{}': expert {}, row {}, block {}: scale {} is not finite (a "
                       "non-finite scale cannot give a meaningful output)",
                       t.name, e, bad.row, bad.block, bad.factor));
  }
}

void scan(const ExpertTensor& t, int threads) {
  require(t.data != nullptr, Status::kInvalidArgument, fmt::format("tensor '{}': no data", t.name));
  const bool known = visit_format(t.type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    scan_tensor<F>(t, threads);
  });
  require(known, Status::kUnsupported,
          fmt::format("tensor '{}': type {} is not a block format strata-moe decodes", t.name,
                      ggml_type_name(t.type)));
}

}  // namespace

int64_t first_non_finite(const float* values, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i])) return i;
  return -1;
}

void require_finite_matrix(std::string_view what, const float* values, int64_t rows, int64_t cols,
                           Status status) {
  // NOTE: no require(): it would format a message per element.
  if (const int64_t i = first_non_finite(values, rows * cols); i >= 0)
    fail(status, fmt::format("{}: element [{}, {}] = {} is not finite", what, i / cols, i % cols,
                             values[i]));
}

void require_finite_result(const float* y, int64_t rows, int64_t cols) {
  if (const int64_t i = first_non_finite(y, rows * cols); i >= 0)
    fail(Status::kInvalidArgument,
         fmt::format("y: element [{}, {}] = {}: the result overflows float32 (x, the weights or "
                     "a scale are too large in magnitude); refused rather than returned",
                     i / cols, i % cols, y[i]));
}

void require_finite_scales(const MoeLayerWeights& layer, int threads) {
  scan(layer.gate, threads);
  scan(layer.up, threads);
  scan(layer.down, threads);
}

}  // namespace strata
