#include "moe_check.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "test_support.hpp"

namespace strata::test {
namespace {

template <class Ref>
ErrorStats compare_impl(const float* got, const Ref* ref, int64_t rows, int64_t cols) {
  ErrorStats s;
  double err_total = 0.0, ref_total = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    double err = 0.0, norm = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const double diff = double{got[r * cols + c]} - double{ref[r * cols + c]};
      err += diff * diff;
      norm += double{ref[r * cols + c]} * double{ref[r * cols + c]};
    }
    err_total += err;
    ref_total += norm;
    const double row_rel = norm > 0.0
                               ? std::sqrt(err / norm)
                               : (err == 0.0 ? 0.0 : std::numeric_limits<double>::infinity());
    if (std::isnan(row_rel) || !(row_rel <= s.worst_row)) {
      if (!std::isnan(s.worst_row)) {
        s.worst_row = row_rel;
        s.worst_row_index = r;
      }
    }
  }
  s.rel_rms = ref_total > 0.0 ? std::sqrt(err_total / ref_total)
                              : (err_total == 0.0 ? 0.0 : std::numeric_limits<double>::infinity());
  return s;
}

}  // namespace

ErrorStats compare_rows(const float* got, const double* ref, int64_t rows, int64_t cols) {
  return compare_impl(got, ref, rows, cols);
}
ErrorStats compare_rows(const float* got, const float* ref, int64_t rows, int64_t cols) {
  return compare_impl(got, ref, rows, cols);
}

int64_t count_bitwise_diffs(const float* a, const float* b, int64_t n) {
  int64_t diffs = 0;
  for (int64_t i = 0; i < n; ++i) diffs += std::memcmp(a + i, b + i, sizeof(float)) != 0;
  return diffs;
}

std::vector<float> poisoned(int64_t n) {
  return std::vector<float>(static_cast<size_t>(n), std::numeric_limits<float>::quiet_NaN());
}

LayerInputs MoeVectors::inputs() const {
  LayerInputs in;
  in.x = x.f32();
  in.ids = ids.i32();
  in.weights = weights.f32();
  in.n_tokens = n_tokens;
  in.k = k;
  return in;
}

MoeVectors load_moe_vectors(int layer) {
  const auto dir = data_dir() / "vectors" / "moe";
  std::ifstream manifest_in(dir / "manifest.json");
  if (!manifest_in) throw std::runtime_error("cannot open the moe manifest");
  const nlohmann::json manifest = nlohmann::json::parse(manifest_in);
  auto file = gguf::File::open(dir / manifest.at("gguf").get<std::string>());
  auto layers = gguf::discover_moe_layers(file);
  MoeVectors v{std::move(file), {}, {}, {}, {}, {}, {}};
  // discover_moe_layers' views point into the mapping, which the move above keeps alive.
  for (auto& l : layers)
    if (l.layer == layer) v.layer = l;
  if (v.layer.weights.n_expert == 0) throw std::runtime_error("layer not found in model.gguf");
  const std::string prefix = "layer" + std::to_string(layer) + ".";
  v.x = npy::read(dir / (prefix + "x.npy"), "x");
  v.ids = npy::read(dir / (prefix + "ids.npy"), "ids");
  v.weights = npy::read(dir / (prefix + "weights.npy"), "weights");
  v.expected_exact = npy::read(dir / (prefix + "expected_exact.npy"), "expected_exact");
  v.expected_ggml = npy::read(dir / (prefix + "expected_ggml.npy"), "expected_ggml");
  v.n_tokens = v.x.shape.at(0);
  v.k = static_cast<int>(v.ids.shape.at(1));
  const auto& figures = manifest.at("layers").at(layer);
  v.ggml_rel_rms = figures.at("rel_rms_ggml_vs_exact").get<double>();
  v.ggml_worst_row = figures.at("worst_row_rel_err").get<double>();
  return v;
}

}  // namespace strata::test
