// Synthetic inputs: valid, deterministic in the seed, of the intended scale and shape.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "cpu/moe_cpu.hpp"
#include "formats/registry.hpp"
#include "moe_check.hpp"
#include "pipeline/routing.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

TEST(Synth, TensorsAreDeterministicFiniteAndScaled) {
  const uint64_t seed = test::fresh_seed("synth_tensor");
  for (const FormatInfo& f : block_formats()) {
    if (!synth::synth_supports(f.type)) continue;
    SCOPED_TRACE(std::string(f.name) + " seed " + std::to_string(seed));
    const int64_t in = 256, out = 16, experts = 3;
    const auto a = synth::random_expert_tensor(f.type, in, out, experts, 0.05, seed);
    const auto b = synth::random_expert_tensor(f.type, in, out, experts, 0.05, seed);
    EXPECT_EQ(a, b);
    std::vector<float> values(static_cast<size_t>(f.block_values));
    double sum_sq = 0;
    int64_t n = 0, non_finite = 0;
    for (size_t off = 0; off < a.size(); off += static_cast<size_t>(f.block_bytes)) {
      f.decode(a.data() + off, values.data());
      for (float v : values) {
        non_finite += !std::isfinite(v);
        sum_sq += double{v} * v;
        ++n;
      }
    }
    EXPECT_EQ(non_finite, 0);
    const double rms = std::sqrt(sum_sq / static_cast<double>(n));
    EXPECT_GT(rms, 0.05 / 4);  // calibrated scale (jitter and coarse E8M0/UE4M3 steps allowed)
    EXPECT_LT(rms, 0.05 * 4);
  }
}

TEST(Synth, RoutingsAreValidAndSkewed) {
  const uint64_t seed = test::fresh_seed("synth_routing");
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t T = 512, E = 64;
  const int k = 6;
  for (const synth::Routing& r :
       {synth::skewed_routing(T, E, k, seed), synth::uniform_routing(T, E, k, seed),
        synth::single_expert_routing(T, E, k, seed)}) {
    EXPECT_NO_THROW(validate_routing(r.ids.data(), r.weights.data(), T, k, E, "ids", "weights"));
    for (int64_t t = 0; t < T; ++t) {
      double sum = 0;
      for (int j = 0; j < k; ++j) {
        EXPECT_GT(r.weights[t * k + j], 0.0f);
        if (j > 0) {
          EXPECT_GE(r.weights[t * k + j - 1], r.weights[t * k + j]);
        }
        sum += r.weights[t * k + j];
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
  }
  const synth::Routing skewed = synth::skewed_routing(T, E, k, seed);
  std::vector<int64_t> count(E, 0);
  for (int32_t e : skewed.ids) ++count[e];
  int64_t empty = 0, max_count = 0;
  for (int64_t c : count) {
    empty += c == 0;
    max_count = std::max(max_count, c);
  }
  EXPECT_GE(empty, 1);                  // some experts get nothing
  EXPECT_GT(max_count, 3 * T * k / E);  // and some get far more than the mean
  const synth::Routing single = synth::single_expert_routing(T, E, 1, seed);
  EXPECT_EQ(std::set<int32_t>(single.ids.begin(), single.ids.end()).size(), 1u);
}

TEST(Synth, ActivationsAreFiniteNonZeroWithOutliers) {
  const uint64_t seed = test::fresh_seed("synth_x");
  const auto x = synth::random_activations(64, 512, seed);
  double sum_sq = 0, amax = 0;
  for (float v : x) {
    ASSERT_TRUE(std::isfinite(v)) << "seed " << seed;
    sum_sq += double{v} * v;
    amax = std::max(amax, double{std::fabs(v)});
  }
  const double rms = std::sqrt(sum_sq / static_cast<double>(x.size()));
  EXPECT_GT(rms, 0.3) << "seed " << seed;
  EXPECT_LT(rms, 3.0) << "seed " << seed;
  EXPECT_GE(amax, 4.0) << "seed " << seed;  // the outlier channels
}

TEST(Synth, LayerOutputHasUnitScale) {
  const uint64_t seed = test::fresh_seed("synth_layer");
  synth::LayerSpec spec;
  spec.d = 512;
  spec.f = 256;
  spec.n_expert = 8;
  spec.seed = seed;
  const auto layer = synth::make_layer(spec);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(layer.weights.gate.data) % 4,
            2u);  // 2-byte aligned on purpose
  const auto r = synth::skewed_routing(32, spec.n_expert, 2, seed + 1);
  const auto x = synth::random_activations(32, spec.d, seed + 2);
  std::vector<float> y = test::poisoned(32 * spec.d);
  run_layer_cpu(layer.weights, LayerInputs{x.data(), r.ids.data(), r.weights.data(), 32, 2},
                Arm::kProduction, 1, y.data());
  double sum_sq = 0;
  for (float v : y) sum_sq += double{v} * v;
  const double rms = std::sqrt(sum_sq / static_cast<double>(y.size()));
  EXPECT_GT(rms, 0.1) << "seed " << seed;
  EXPECT_LT(rms, 10.0) << "seed " << seed;
}

}  // namespace
}  // namespace strata
