// Shared pieces of the GPU layer tests (every arm, either profile): the device copies of one
// case's inputs with a NaN-poisoned y, sorted-pair rows back in (token, slot) order, routings
// with exact per-expert pair counts, and NaN counts.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/backend/run_layer.hpp"
#include "gpu_test_util.hpp"
#include "synth/synth.hpp"

namespace strata::test {

// Device inputs of one run (x, ids, weights) and its y, poisoned before every run.
struct DeviceRun {
  cuda::DeviceBuffer<float> x, weights, y;
  cuda::DeviceBuffer<int32_t> ids;
  cuda::DeviceInputs inputs;
  int64_t n_y = 0;

  DeviceRun(const LayerInputs& in, int64_t d)
      : x(to_device(std::vector<float>(in.x, in.x + in.n_tokens * d))),
        weights(to_device(std::vector<float>(in.weights, in.weights + in.n_tokens * in.k))),
        y(static_cast<size_t>(in.n_tokens * d)),
        ids(to_device(std::vector<int32_t>(in.ids, in.ids + in.n_tokens * in.k))),
        n_y(in.n_tokens * d) {
    inputs = {x.get(), ids.get(), weights.get(), in.n_tokens, in.k};
  }

  void poison_y() { poison_device(y.get(), static_cast<size_t>(n_y)); }
  std::vector<float> y_host() const { return to_host(y.get(), static_cast<size_t>(n_y)); }

  RunReport last;  // what the latest run() ran

  // cuda::run_layer on these inputs; waits for the stream and returns y.
  std::vector<float> run(const MoeLayerWeights& layer, Arm arm, cuda::Workspace& ws, cudaStream_t stream = nullptr,
                         Numerics numerics = Numerics::kQ8) {
    poison_y();
    last = cuda::run_layer(layer, inputs, arm, ws, stream, y.get(), nullptr, numerics);
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
    return y_host();
  }
};

// Device sorted-pair rows [P, cols] -> host (t, j) rows through the device grouping tables
// (pair_token, pair_slot); rows no pair maps to stay NaN for float.
template <class T>
std::vector<T> unsorted_rows(const T* device_rows, const int32_t* pair_token, const int32_t* pair_slot,
                             int64_t n_pairs, int k, int64_t cols) {
  const auto sorted = to_host(device_rows, static_cast<size_t>(n_pairs * cols));
  const auto token = to_host(pair_token, static_cast<size_t>(n_pairs));
  const auto slot = to_host(pair_slot, static_cast<size_t>(n_pairs));
  std::vector<T> out(sorted.size());
  if constexpr (std::is_floating_point_v<T>) std::fill(out.begin(), out.end(), std::nanf(""));
  for (int64_t p = 0; p < n_pairs; ++p)
    std::copy_n(sorted.data() + p * cols, cols, out.data() + (int64_t{token[p]} * k + slot[p]) * cols);
  return out;
}

// The same through a workspace view with `grouping` tables and `n_pairs` (cuda::WorkspaceView,
// fused_q10::Q10WorkspaceView).
template <class T, class View>
std::vector<T> unsorted_rows(const T* device_rows, const View& view, int k, int64_t cols) {
  return unsorted_rows(device_rows, view.grouping.pair_token, view.grouping.pair_slot, view.n_pairs, k, cols);
}

// Poisons a workspace view's gate, up and h rows ([P, f]) so an element a kernel fails to write
// shows as NaN (rows the view does not hold are skipped).
template <class View>
void poison_gate_up_h(const View& v, int64_t f) {
  for (const float* rows : {v.gate, v.up, v.h})
    if (rows != nullptr) poison_device(const_cast<float*>(rows), static_cast<size_t>(v.n_pairs * f));
}

// Experts 0.. with exactly counts[e] pairs, the remaining pairs spread over the experts after
// them; pair position p goes to token p % T, slot p / T, so no token meets an expert twice (each
// count must be <= T). Weights: random, normalised per token.
inline synth::Routing counted_routing(int64_t T, int64_t E, int k, std::vector<int64_t> counts, uint64_t seed) {
  int64_t fixed = 0;
  for (int64_t c : counts) fixed += c;
  const int64_t n_pairs = T * k;
  const auto first_free = static_cast<int64_t>(counts.size());
  counts.resize(static_cast<size_t>(E), 0);
  for (int64_t i = 0; i < n_pairs - fixed; ++i) counts[static_cast<size_t>(first_free + i % (E - first_free))]++;
  std::vector<int32_t> sequence;
  for (int64_t e = 0; e < E; ++e) {
    EXPECT_LE(counts[static_cast<size_t>(e)], T) << "a run longer than T would repeat an expert in a token";
    sequence.insert(sequence.end(), static_cast<size_t>(counts[static_cast<size_t>(e)]), static_cast<int32_t>(e));
  }
  synth::Routing r;
  r.k = k;
  r.ids.assign(static_cast<size_t>(n_pairs), 0);
  r.weights.assign(static_cast<size_t>(n_pairs), 0.0f);
  synth::Rng rng(seed);
  for (int64_t p = 0; p < n_pairs; ++p) r.ids[static_cast<size_t>((p % T) * k + p / T)] = sequence[static_cast<size_t>(p)];
  for (int64_t t = 0; t < T; ++t) {
    float sum = 0.0f;
    for (int j = 0; j < k; ++j) sum += (r.weights[static_cast<size_t>(t * k + j)] = 0.1f + static_cast<float>(rng.uniform()));
    for (int j = 0; j < k; ++j) r.weights[static_cast<size_t>(t * k + j)] /= sum;
  }
  return r;
}

// Sets (or, for nullptr, unsets) an environment variable while it lives: the switches of the
// fused path that the tests steer.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) EXPECT_EQ(setenv(name, value, 1), 0);
    else EXPECT_EQ(unsetenv(name), 0);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

inline int64_t count_nan(const std::vector<float>& v) {
  int64_t n = 0;
  for (float x : v) n += std::isnan(x);
  return n;
}

}  // namespace strata::test
