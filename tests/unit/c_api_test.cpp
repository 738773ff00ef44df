// The C API and its C++ wrapper: the happy path equals run_layer_cpu bitwise; bad arguments give
// a status and a message naming the argument; no exception crosses the boundary.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>

#include <cmath>
#include <string>

#include "cpu/moe_cpu.hpp"
#include "moe_check.hpp"
#include "strata_moe.h"
#include "strata_moe/layer.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

strata_moe_tensor_desc desc_of(const ExpertTensor& t) {
  return {static_cast<uint32_t>(t.type),
          t.data,
          t.in_features,
          t.out_features,
          t.n_expert,
          0,
          t.name.c_str()};
}

strata_moe_layer_desc desc_of(const MoeLayerWeights& w) {
  return {w.d, w.f, w.n_expert, desc_of(w.gate), desc_of(w.up), desc_of(w.down)};
}

struct Fixture {
  uint64_t seed;
  synth::SyntheticLayer layer;
  synth::Routing routing;
  std::vector<float> x;
  int64_t n_tokens = 33;
  int k = 3;

  explicit Fixture(const char* salt) : seed(test::fresh_seed(salt)) {
    synth::LayerSpec spec;
    spec.d = 256;
    spec.f = 128;
    spec.n_expert = 8;
    spec.seed = seed;
    layer = synth::make_layer(spec);
    routing = synth::skewed_routing(n_tokens, spec.n_expert, k, seed + 1);
    x = synth::random_activations(n_tokens, spec.d, seed + 2);
  }
};

void expect_names(strata_moe_status status, strata_moe_status expected, const std::string& name) {
  EXPECT_EQ(status, expected) << strata_moe_last_error();
  EXPECT_NE(std::string(strata_moe_last_error()).find(name), std::string::npos)
      << "message '" << strata_moe_last_error() << "' does not name " << name;
}

TEST(CApi, RunEqualsRunLayerCpuBitwise) {
  Fixture fx("c_api_happy");
  SCOPED_TRACE("seed " + std::to_string(fx.seed));
  const MoeLayerWeights& w = fx.layer.weights;
  const int64_t n_y = fx.n_tokens * w.d;
  const strata_moe_layer_desc desc = desc_of(w);
  strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, desc);
  for (auto [c_arm, arm] : {std::pair{STRATA_MOE_ARM_PRODUCTION, Arm::kProduction},
                            std::pair{STRATA_MOE_ARM_FUSED, Arm::kFused}}) {
    std::vector<float> y_api = test::poisoned(n_y), y_ref = test::poisoned(n_y);
    strata_moe_run_options options = strata_moe::run_options();
    options.arm = c_arm;
    options.threads = 2;
    layer.run(fx.x.data(), fx.routing.ids.data(), fx.routing.weights.data(), fx.n_tokens, fx.k,
              y_api.data(), &options);
    run_layer_cpu(w,
                  LayerInputs{fx.x.data(), fx.routing.ids.data(), fx.routing.weights.data(),
                              fx.n_tokens, fx.k},
                  arm, 1, y_ref.data());
    EXPECT_EQ(test::count_bitwise_diffs(y_api.data(), y_ref.data(), n_y), 0);
  }
  // Default options (NULL): the environment's arm; both arms agree bitwise, so the result must too.
  std::vector<float> y_default = test::poisoned(n_y), y_ref = test::poisoned(n_y);
  layer.run(fx.x.data(), fx.routing.ids.data(), fx.routing.weights.data(), fx.n_tokens, fx.k,
            y_default.data());
  run_layer_cpu(
      w,
      LayerInputs{fx.x.data(), fx.routing.ids.data(), fx.routing.weights.data(), fx.n_tokens, fx.k},
      Arm::kProduction, 1, y_ref.data());
  EXPECT_EQ(test::count_bitwise_diffs(y_default.data(), y_ref.data(), n_y), 0);
}

// The profile is part of the call: q10 through the C API equals the q10 CPU arm bitwise, differs
// from q8, and STRATA_NUMERICS is the default of a call that names none.
TEST(CApi, NumericsProfileIsPartOfTheCall) {
  Fixture fx("c_api_numerics");
  SCOPED_TRACE("seed " + std::to_string(fx.seed));
  const MoeLayerWeights& w = fx.layer.weights;
  const int64_t n_y = fx.n_tokens * w.d;
  strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, desc_of(w));
  const LayerInputs in{fx.x.data(), fx.routing.ids.data(), fx.routing.weights.data(), fx.n_tokens,
                       fx.k};
  std::vector<float> y_q10 = test::poisoned(n_y), y_q8 = test::poisoned(n_y);
  run_layer_cpu(w, in, Arm::kProduction, 1, y_q10.data(), nullptr, Numerics::kQ10);
  run_layer_cpu(w, in, Arm::kProduction, 1, y_q8.data(), nullptr, Numerics::kQ8);
  EXPECT_GT(test::count_bitwise_diffs(y_q10.data(), y_q8.data(), n_y), 0)
      << "the two profiles must give different bits";
  for (auto c_arm : {STRATA_MOE_ARM_PRODUCTION, STRATA_MOE_ARM_FUSED}) {
    strata_moe_run_options options = strata_moe::run_options();
    options.arm = c_arm;
    options.numerics = STRATA_MOE_NUMERICS_Q10;
    std::vector<float> y = test::poisoned(n_y);
    layer.run(in.x, in.ids, in.weights, in.n_tokens, in.k, y.data(), &options);
    EXPECT_EQ(test::count_bitwise_diffs(y.data(), y_q10.data(), n_y), 0);
  }
  // A caller built against the first header version (no numerics field) gets the default.
  strata_moe_run_options old = strata_moe::run_options();
  old.struct_size = offsetof(strata_moe_run_options, numerics);
  old.numerics = STRATA_MOE_NUMERICS_Q10;  // beyond struct_size: must not be read
  std::vector<float> y_old = test::poisoned(n_y);
  ASSERT_EQ(unsetenv("STRATA_NUMERICS"), 0);
  layer.run(in.x, in.ids, in.weights, in.n_tokens, in.k, y_old.data(), &old);
  EXPECT_EQ(test::count_bitwise_diffs(y_old.data(), y_q8.data(), n_y), 0);
  // STRATA_NUMERICS decides a call that names no profile; a bad value is an error naming it.
  ASSERT_EQ(setenv("STRATA_NUMERICS", "q10", 1), 0);
  std::vector<float> y_env = test::poisoned(n_y);
  layer.run(in.x, in.ids, in.weights, in.n_tokens, in.k, y_env.data());
  EXPECT_EQ(test::count_bitwise_diffs(y_env.data(), y_q10.data(), n_y), 0);
  ASSERT_EQ(setenv("STRATA_NUMERICS", "q9", 1), 0);
  std::vector<float> y_bad = test::poisoned(n_y);
  expect_names(strata_moe_layer_run(layer.get(), in.x, in.ids, in.weights, in.n_tokens, in.k,
                                    y_bad.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "STRATA_NUMERICS");
  ASSERT_EQ(unsetenv("STRATA_NUMERICS"), 0);
}

TEST(CApi, CreateRejectsBadDescriptors) {
  Fixture fx("c_api_create");
  const strata_moe_layer_desc good = desc_of(fx.layer.weights);
  strata_moe_layer* layer = reinterpret_cast<strata_moe_layer*>(0x1);
  expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, nullptr, &layer),
               STRATA_MOE_INVALID_ARGUMENT, "desc");
  EXPECT_EQ(layer, nullptr);
  expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, &good, nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "layer");

  strata_moe_layer_desc bad = good;
  bad.down.data = nullptr;
  expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, &bad, &layer),
               STRATA_MOE_INVALID_ARGUMENT, "down");
  bad = good;
  bad.up.ne1 = good.f + 32;
  expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, &bad, &layer),
               STRATA_MOE_INVALID_ARGUMENT, "up");
  bad = good;
  bad.gate.ne0 = 100;  // not a multiple of IQ3_S's 256
  expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, &bad, &layer),
               STRATA_MOE_INVALID_ARGUMENT, "gate");
  bad = good;
  bad.gate.ggml_type = 5;  // removed from ggml
  expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, &bad, &layer),
               STRATA_MOE_UNSUPPORTED, "gate");
  bad = good;
  bad.down.expert_stride_bytes = 10;
  expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, &bad, &layer),
               STRATA_MOE_INVALID_ARGUMENT, "expert_stride_bytes");
  if (strata_moe_cuda_device_count() == 0) {
#ifndef STRATA_MOE_HAVE_CUDA
    expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CUDA, &good, &layer),
                 STRATA_MOE_UNSUPPORTED, "CUDA");
#endif
  }
  EXPECT_EQ(layer, nullptr);
}

TEST(CApi, RunRejectsBadArguments) {
  Fixture fx("c_api_run");
  const strata_moe_layer_desc desc = desc_of(fx.layer.weights);
  strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, desc);
  std::vector<float> y = test::poisoned(fx.n_tokens * desc.d);
  const int32_t* ids = fx.routing.ids.data();
  const float* w = fx.routing.weights.data();
  const float* x = fx.x.data();
  strata_moe_layer* h = layer.get();
  expect_names(strata_moe_layer_run(nullptr, x, ids, w, fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "layer");
  expect_names(strata_moe_layer_run(h, nullptr, ids, w, fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "x");
  expect_names(strata_moe_layer_run(h, x, nullptr, w, fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "ids");
  expect_names(strata_moe_layer_run(h, x, ids, nullptr, fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "weights");
  expect_names(strata_moe_layer_run(h, x, ids, w, fx.n_tokens, fx.k, nullptr, nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "y");
  expect_names(strata_moe_layer_run(h, x, ids, w, 0, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "n_tokens");
  expect_names(strata_moe_layer_run(h, x, ids, w, fx.n_tokens, 0, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "k");
  expect_names(strata_moe_layer_run(h, x, ids, w, fx.n_tokens, 9, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "k");

  std::vector<int32_t> bad_ids(fx.routing.ids);
  bad_ids[5] = static_cast<int32_t>(desc.n_expert);
  expect_names(strata_moe_layer_run(h, x, bad_ids.data(), w, fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "ids");
  bad_ids[5] = -1;
  expect_names(strata_moe_layer_run(h, x, bad_ids.data(), w, fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "ids");
  std::vector<float> bad_w(fx.routing.weights);
  bad_w[4] = -0.25f;
  expect_names(strata_moe_layer_run(h, x, ids, bad_w.data(), fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "weights");
  std::vector<float> bad_x(fx.x);
  bad_x[17] = INFINITY;
  expect_names(strata_moe_layer_run(h, bad_x.data(), ids, w, fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "x");
  strata_moe_run_options bad_arm = strata_moe::run_options();
  bad_arm.arm = static_cast<strata_moe_arm>(9);
  expect_names(strata_moe_layer_run(h, x, ids, w, fx.n_tokens, fx.k, y.data(), &bad_arm),
               STRATA_MOE_INVALID_ARGUMENT, "arm");
  strata_moe_run_options bad_numerics = strata_moe::run_options();
  bad_numerics.numerics = static_cast<strata_moe_numerics>(7);
  expect_names(strata_moe_layer_run(h, x, ids, w, fx.n_tokens, fx.k, y.data(), &bad_numerics),
               STRATA_MOE_INVALID_ARGUMENT, "numerics");
  strata_moe_run_options no_size = strata_moe::run_options();
  no_size.struct_size = 0;
  expect_names(strata_moe_layer_run(h, x, ids, w, fx.n_tokens, fx.k, y.data(), &no_size),
               STRATA_MOE_INVALID_ARGUMENT, "struct_size");

  // The C++ wrapper carries status and message.
  try {
    layer.run(x, bad_ids.data(), w, fx.n_tokens, fx.k, y.data());
    FAIL() << "expected strata_moe::Error";
  } catch (const strata_moe::Error& e) {
    EXPECT_EQ(e.status(), STRATA_MOE_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("ids"), std::string::npos) << e.what();
  }
}

TEST(CApi, RouteMatchesTheVectors) {
  const test::MoeVectors v = test::load_moe_vectors(0);
  std::vector<int32_t> ids(v.n_tokens * v.k, -1);
  std::vector<float> weights = test::poisoned(v.n_tokens * v.k);
  strata_moe::route(reinterpret_cast<const float*>(v.layer.router->data), v.x.f32(), v.n_tokens,
                    v.layer.weights.d, v.layer.weights.n_expert, v.k,
                    STRATA_MOE_GATING_SOFTMAX_TOPK_RENORM, ids.data(), weights.data());
  int64_t mismatches = 0;
  for (int64_t i = 0; i < v.n_tokens * v.k; ++i) mismatches += ids[i] != v.ids.i32()[i];
  EXPECT_EQ(mismatches, 0);
  expect_names(
      strata_moe_route(nullptr, v.x.f32(), v.n_tokens, v.layer.weights.d, v.layer.weights.n_expert,
                       v.k, STRATA_MOE_GATING_SOFTMAX_TOPK_RENORM, ids.data(), weights.data(), 1),
      STRATA_MOE_INVALID_ARGUMENT, "router");
}

}  // namespace
}  // namespace strata
