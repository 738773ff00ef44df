// Shared checks for MoE layer tests (CPU and GPU): error metrics against a double reference,
// bitwise comparison, poisoned outputs, and the bundled qwen3moe vectors.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf.hpp"
#include "io/npy.hpp"
#include "reference/oracle.hpp"

namespace strata::test {

// rel_rms = ||got - ref||_F / ||ref||_F; worst_row = max_t ||got_t - ref_t|| / ||ref_t||.
// A NaN anywhere in `got` makes both NaN (so any bound check fails).
struct ErrorStats {
  double rel_rms = 0.0;
  double worst_row = 0.0;
  int64_t worst_row_index = -1;
};
ErrorStats compare_rows(const float* got, const double* ref, int64_t rows, int64_t cols);
ErrorStats compare_rows(const float* got, const float* ref, int64_t rows, int64_t cols);

// Elements whose bit patterns differ (NaN != NaN counts as equal only with equal bits).
int64_t count_bitwise_diffs(const float* a, const float* b, int64_t n);

// An output buffer filled with NaN, so an element an arm forgets to write fails the checks.
std::vector<float> poisoned(int64_t n);

// One layer of tests/data/vectors/moe (file, layer views and the npy inputs/expectations).
struct MoeVectors {
  gguf::File file;
  gguf::MoeLayerInfo layer;
  npy::Array x, ids, weights, expected_exact, expected_ggml;
  int64_t n_tokens = 0;
  int k = 0;
  double ggml_rel_rms = 0.0;    // manifest: ggml vs exact
  double ggml_worst_row = 0.0;  // manifest: worst row of ggml vs exact

  LayerInputs inputs() const;
};
MoeVectors load_moe_vectors(int layer);

}  // namespace strata::test
