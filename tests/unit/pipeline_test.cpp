// Pipeline pieces: the activation quantisation rule, grouping order, routing from the router.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/error.hpp"
#include "moe_check.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/grouping.hpp"
#include "pipeline/quantize.hpp"
#include "pipeline/routing.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

constexpr double kRouterWeightTolerance = 1e-6;

// exp_f32 as first written, returning early outside the polynomial's range: the branch-free
// exp_f32 must give its bits for every input.
float exp_f32_early_return(float x) {
  if (!(x < 88.72283f)) return (x != x) ? x : INFINITY;
  if (x < -103.97208f) return 0.0f;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = fmaf(n, -0.693359375f, x);
  r = fmaf(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = fmaf(p, r, 1.3981999507e-3f);
  p = fmaf(p, r, 8.3334519073e-3f);
  p = fmaf(p, r, 4.1665795894e-2f);
  p = fmaf(p, r, 1.6666665459e-1f);
  p = fmaf(p, r, 5.0000001201e-1f);
  p = fmaf(p, r * r, r) + 1.0f;
  const int ni = static_cast<int>(n);
  const int half = ni / 2;
  const float s1 = bits_to_float(static_cast<uint32_t>(half + 127) << 23);
  const float s2 = bits_to_float(static_cast<uint32_t>(ni - half + 127) << 23);
  return (p * s1) * s2;
}

TEST(ExpF32, BranchFreeGivesTheEarlyReturnBits) {
  auto check = [](uint32_t bits) {
    const float x = bits_to_float(bits);
    const uint32_t got = float_to_bits(exp_f32(x)), want = float_to_bits(exp_f32_early_return(x));
    if (got != want) ADD_FAILURE() << "x bits 0x" << std::hex << bits << ": 0x" << got << " against 0x" << want;
    return got == want;
  };
  // A stride over all 2^32 bit patterns (both signs, NaNs and infinities among them), then every
  // float within 2^16 ulps of the two range ends and of the infinities.
  int failures = 0;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32) && failures < 8; bits += 251)
    failures += !check(static_cast<uint32_t>(bits));
  for (const float edge : {88.72283f, -103.97208f, INFINITY, -INFINITY})
    for (int step = -(1 << 16); step <= (1 << 16) && failures < 8; ++step)
      failures += !check(float_to_bits(edge) + static_cast<uint32_t>(step));
  EXPECT_EQ(failures, 0);
}

TEST(QuantizeBlock32, TiesRoundAwayFromZeroAndAmaxIsFull) {
  float x[32];
  for (int i = 0; i < 32; ++i) x[i] = 0.0f;
  // amax = 127 gives d = 1 exactly, so x / d = x and the halves are exact ties.
  x[0] = 127.0f;
  x[1] = -127.0f;
  x[2] = 2.5f;
  x[3] = -2.5f;
  x[4] = 0.5f;
  x[5] = -0.5f;
  x[20] = 3.49f;
  int8_t q[32];
  float d;
  int32_t half_sums[2];
  quantize_block32(x, q, &d, half_sums);
  EXPECT_EQ(d, 1.0f);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], -127);
  EXPECT_EQ(q[2], 3);
  EXPECT_EQ(q[3], -3);
  EXPECT_EQ(q[4], 1);
  EXPECT_EQ(q[5], -1);
  EXPECT_EQ(q[20], 3);
  EXPECT_EQ(half_sums[0], 127 - 127 + 3 - 3 + 1 - 1);
  EXPECT_EQ(half_sums[1], 3);
}

TEST(QuantizeBlock32, AllZeroBlockGivesZeroScaleAndCodes) {
  float x[32] = {};
  int8_t q[32];
  float d = -1.0f;
  int32_t half_sums[2] = {7, 7};
  quantize_block32(x, q, &d, half_sums);
  EXPECT_EQ(d, 0.0f);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(q[i], 0) << i;
  EXPECT_EQ(half_sums[0], 0);
  EXPECT_EQ(half_sums[1], 0);
}

TEST(QuantizeBlock32, AmaxCodeIsPlusMinus127OnRandomBlocks) {
  const uint64_t seed = test::fresh_seed("amax");
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int trial = 0; trial < 1000; ++trial) {
    float x[32];
    for (float& v : x) v = normal(rng);
    int amax_index = 0;
    for (int i = 1; i < 32; ++i)
      if (std::fabs(x[i]) > std::fabs(x[amax_index])) amax_index = i;
    int8_t q[32];
    float d;
    int32_t half_sums[2];
    quantize_block32(x, q, &d, half_sums);
    ASSERT_EQ(std::abs(int{q[amax_index]}), 127) << "seed " << seed << " trial " << trial;
    int32_t sums[2] = {0, 0};
    for (int i = 0; i < 32; ++i) {
      ASSERT_LE(std::abs(int{q[i]}), 127);
      sums[i / 16] += q[i];
    }
    ASSERT_EQ(sums[0], half_sums[0]);
    ASSERT_EQ(sums[1], half_sums[1]);
  }
}

TEST(QuantizeRows, EachRowMatchesTheBlockRuleForAnyThreadCount) {
  const uint64_t seed = test::fresh_seed("rows");
  const std::vector<float> x = synth::random_activations(37, 96, seed);
  QuantizedRows one, four;
  quantize_rows(x.data(), 37, 96, one, 1);
  quantize_rows(x.data(), 37, 96, four, 4);
  EXPECT_EQ(one.codes, four.codes) << "seed " << seed;
  EXPECT_EQ(one.half_sums, four.half_sums);
  EXPECT_EQ(test::count_bitwise_diffs(one.scales.data(), four.scales.data(), one.scales.size()), 0);
  int8_t q[32];
  float d;
  int32_t hs[2];
  quantize_block32(x.data() + 5 * 96 + 64, q, &d, hs);
  EXPECT_EQ(d, one.scales[5 * 3 + 2]);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(q[i], one.codes[5 * 96 + 64 + i]);
  EXPECT_THROW(quantize_rows(x.data(), 37, 90, one, 1), Error);
}

TEST(Grouping, OrderIsExpertThenTokenThenSlot) {
  // T = 3, k = 2, E = 4; expert 2 is empty.
  const int32_t ids[] = {3, 0, 0, 1, 1, 3};
  const Grouping g = group_by_expert(ids, 3, 2, 4);
  EXPECT_EQ(g.expert_offsets, (std::vector<int32_t>{0, 2, 4, 4, 6}));
  EXPECT_EQ(g.pair_token, (std::vector<int32_t>{0, 1, 1, 2, 0, 2}));
  EXPECT_EQ(g.pair_slot, (std::vector<int32_t>{1, 0, 1, 0, 0, 1}));
  EXPECT_EQ(g.expert_rows(2), 0);
  for (int64_t slot = 0; slot < 6; ++slot) {
    const int32_t p = g.slot_to_pair[slot];
    EXPECT_EQ(g.pair_token[p] * 2 + g.pair_slot[p], slot);
  }
}

TEST(Grouping, RandomRoutingIsSortedStableAndComplete) {
  const uint64_t seed = test::fresh_seed("grouping");
  const synth::Routing r = synth::skewed_routing(301, 64, 6, seed);
  const Grouping g = group_by_expert(r.ids.data(), 301, 6, 64);
  ASSERT_EQ(g.expert_offsets.back(), 301 * 6) << "seed " << seed;
  for (int64_t e = 0; e < 64; ++e)
    for (int32_t p = g.expert_offsets[e]; p < g.expert_offsets[e + 1]; ++p) {
      ASSERT_EQ(r.ids[g.pair_token[p] * 6 + g.pair_slot[p]], e) << "seed " << seed;
      if (p > g.expert_offsets[e]) {
        ASSERT_LT(g.pair_token[p - 1], g.pair_token[p]) << "seed " << seed;
      }
    }
}

TEST(Routing, RouterReproducesTheVectorsIdsAndWeights) {
  for (int layer = 0; layer < 2; ++layer) {
    const test::MoeVectors v = test::load_moe_vectors(layer);
    ASSERT_NE(v.layer.router, nullptr);
    std::vector<int32_t> ids(v.n_tokens * v.k, -1);
    std::vector<float> weights = test::poisoned(v.n_tokens * v.k);
    route_tokens(reinterpret_cast<const float*>(v.layer.router->data), v.x.f32(), v.n_tokens,
                 v.layer.weights.d, v.layer.weights.n_expert, v.k, Gating::kSoftmaxTopKRenorm,
                 ids.data(), weights.data(), 2);
    int64_t id_mismatches = 0;
    double worst = 0.0;
    for (int64_t i = 0; i < v.n_tokens * v.k; ++i) {
      id_mismatches += ids[i] != v.ids.i32()[i];
      const double diff = std::fabs(double{weights[i]} - double{v.weights.f32()[i]});
      worst = std::isnan(diff) ? INFINITY : std::max(worst, diff);
    }
    EXPECT_EQ(id_mismatches, 0) << "layer " << layer;
    EXPECT_LE(worst, kRouterWeightTolerance) << "layer " << layer;
  }
}

TEST(Routing, GatingRulesAndTies) {
  // E = 4, d = 1, x = 1: logits are the router column.
  const float router[] = {1.0f, 3.0f, 3.0f, 2.0f};
  const float x[] = {1.0f};
  int32_t ids[2];
  float w[2];
  route_tokens(router, x, 1, 1, 4, 2, Gating::kSoftmaxTopKRenorm, ids, w, 1);
  EXPECT_EQ(ids[0], 1);  // tie between 1 and 2 goes to the lower id
  EXPECT_EQ(ids[1], 2);
  EXPECT_FLOAT_EQ(w[0], 0.5f);
  EXPECT_FLOAT_EQ(w[1], 0.5f);
  route_tokens(router, x, 1, 1, 4, 2, Gating::kSoftmaxTopK, ids, w, 1);
  const double z = std::exp(1.0) + 2 * std::exp(3.0) + std::exp(2.0);
  EXPECT_NEAR(w[0], std::exp(3.0) / z, 1e-6);
  route_tokens(router, x, 1, 1, 4, 2, Gating::kTopKSoftmax, ids, w, 1);
  EXPECT_EQ(ids[0], 1);
  EXPECT_NEAR(w[0] + w[1], 1.0, 1e-6);
}

TEST(Routing, ValidationNamesTheArgument) {
  const int32_t ids_bad[] = {0, 5};
  const float weights_ok[] = {0.5f, 0.5f};
  try {
    validate_routing(ids_bad, weights_ok, 1, 2, 4, "--ids", "--weights");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("--ids"), std::string::npos) << e.what();
  }
  const int32_t ids_twice[] = {1, 1};
  EXPECT_THROW(validate_routing(ids_twice, weights_ok, 1, 2, 4, "ids", "weights"), Error);
  const int32_t ids_ok[] = {0, 1};
  const float weights_nan[] = {NAN, 0.5f};
  const float weights_negative[] = {0.5f, -0.1f};
  for (const float* w : {weights_nan, weights_negative}) {
    try {
      validate_routing(ids_ok, w, 1, 2, 4, "ids", "--weights");
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--weights"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(validate_routing(ids_ok, weights_ok, 1, 2, 4, "ids", "weights"));
}

}  // namespace
}  // namespace strata
