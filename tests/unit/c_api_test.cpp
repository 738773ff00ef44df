// The C API and its C++ wrapper: the happy path equals run_layer_cpu bitwise; bad arguments give
// a status and a message naming the argument; no exception crosses the boundary.
#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>

#include "cpu/moe_cpu.hpp"
#include "moe_check.hpp"
#include "strata_moe.h"
#include "strata_moe/layer.hpp"
#include "synth/synth.hpp"
#include "synthetic_case.hpp"
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
    options.numerics = STRATA_MOE_NUMERICS_Q8;
    strata_moe_run_report report{};
    report.struct_size = sizeof(report);
    options.report = &report;
    layer.run(fx.x.data(), fx.routing.ids.data(), fx.routing.weights.data(), fx.n_tokens, fx.k,
              y_api.data(), &options);
    EXPECT_EQ(report.arm, c_arm) << "the report names the arm that ran";
    EXPECT_EQ(report.numerics, STRATA_MOE_NUMERICS_Q8);
    EXPECT_STREQ(report.fallback, "");
    run_layer_cpu(w,
                  LayerInputs{fx.x.data(), fx.routing.ids.data(), fx.routing.weights.data(),
                              fx.n_tokens, fx.k},
                  arm, 1, y_ref.data());
    EXPECT_EQ(test::count_bitwise_diffs(y_api.data(), y_ref.data(), n_y), 0);
  }
  // Default options (NULL): the environment's arm, and (no STRATA_NUMERICS) q10, which the CPU
  // backend carries for every format; both arms agree bitwise, so the result must too.
  ASSERT_EQ(unsetenv("STRATA_NUMERICS"), 0);
  std::vector<float> y_default = test::poisoned(n_y), y_ref = test::poisoned(n_y);
  layer.run(fx.x.data(), fx.routing.ids.data(), fx.routing.weights.data(), fx.n_tokens, fx.k,
            y_default.data());
  run_layer_cpu(
      w,
      LayerInputs{fx.x.data(), fx.routing.ids.data(), fx.routing.weights.data(), fx.n_tokens, fx.k},
      Arm::kProduction, 1, y_ref.data(), nullptr, Numerics::kQ10);
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
  // A caller built against the first header version (no numerics field) gets the default: q10,
  // which the CPU backend carries for this layer.
  strata_moe_run_options old = strata_moe::run_options();
  old.struct_size = offsetof(strata_moe_run_options, numerics);
  old.numerics = STRATA_MOE_NUMERICS_Q8;  // beyond struct_size: must not be read
  std::vector<float> y_old = test::poisoned(n_y);
  ASSERT_EQ(unsetenv("STRATA_NUMERICS"), 0);
  layer.run(in.x, in.ids, in.weights, in.n_tokens, in.k, y_old.data(), &old);
  EXPECT_EQ(test::count_bitwise_diffs(y_old.data(), y_q10.data(), n_y), 0);
  // STRATA_NUMERICS decides a call that names no profile; a bad value is an error naming it.
  ASSERT_EQ(setenv("STRATA_NUMERICS", "q8", 1), 0);
  std::vector<float> y_env = test::poisoned(n_y);
  strata_moe_run_options with_report = strata_moe::run_options();
  strata_moe_run_report report{};
  report.struct_size = sizeof(report);
  with_report.report = &report;
  layer.run(in.x, in.ids, in.weights, in.n_tokens, in.k, y_env.data(), &with_report);
  EXPECT_EQ(test::count_bitwise_diffs(y_env.data(), y_q8.data(), n_y), 0);
  EXPECT_EQ(report.numerics, STRATA_MOE_NUMERICS_Q8) << "the report names the profile that ran";
  EXPECT_EQ(report.arm, STRATA_MOE_ARM_PRODUCTION);
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

// ---- misuse ------------------------------------------------------------------------------------

TEST(CApi, MisalignedPointersAreRefused) {
  Fixture fx("c_api_misaligned");
  const strata_moe_layer_desc desc = desc_of(fx.layer.weights);
  strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, desc);
  strata_moe_layer* h = layer.get();
  // Copies one byte into a larger buffer: every pointer below is odd.
  std::vector<uint8_t> x_bytes(fx.x.size() * 4 + 1), y_bytes(fx.n_tokens * desc.d * 4 + 1);
  std::vector<uint8_t> ids_bytes(fx.routing.ids.size() * 4 + 1);
  std::vector<uint8_t> w_bytes(fx.routing.weights.size() * 4 + 1);
  std::memcpy(x_bytes.data() + 1, fx.x.data(), fx.x.size() * 4);
  std::memcpy(ids_bytes.data() + 1, fx.routing.ids.data(), fx.routing.ids.size() * 4);
  std::memcpy(w_bytes.data() + 1, fx.routing.weights.data(), fx.routing.weights.size() * 4);
  const auto* x_odd = reinterpret_cast<const float*>(x_bytes.data() + 1);
  const auto* ids_odd = reinterpret_cast<const int32_t*>(ids_bytes.data() + 1);
  const auto* w_odd = reinterpret_cast<const float*>(w_bytes.data() + 1);
  auto* y_odd = reinterpret_cast<float*>(y_bytes.data() + 1);
  std::vector<float> y(fx.n_tokens * desc.d);
  const float* x = fx.x.data();
  const int32_t* ids = fx.routing.ids.data();
  const float* w = fx.routing.weights.data();
  expect_names(strata_moe_layer_run(h, x_odd, ids, w, fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "x: pointer");
  expect_names(strata_moe_layer_run(h, x, ids_odd, w, fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "ids: pointer");
  expect_names(strata_moe_layer_run(h, x, ids, w_odd, fx.n_tokens, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "weights: pointer");
  expect_names(strata_moe_layer_run(h, x, ids, w, fx.n_tokens, fx.k, y_odd, nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "y: pointer");
  // Weights need 2-byte alignment only: an odd address is refused at creation.
  strata_moe_layer_desc odd = desc;
  odd.down.data = static_cast<const uint8_t*>(odd.down.data) + 1;
  strata_moe_layer* none = nullptr;
  expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, &odd, &none),
               STRATA_MOE_INVALID_ARGUMENT, "desc.down");
  EXPECT_EQ(none, nullptr);
}

TEST(CApi, SizesBeyondTheLimitsAreRefusedBeforeAnyRead) {
  Fixture fx("c_api_sizes");
  const strata_moe_layer_desc desc = desc_of(fx.layer.weights);
  strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, desc);
  strata_moe_layer* h = layer.get();
  std::vector<float> y(fx.n_tokens * desc.d);
  const float* x = fx.x.data();
  const int32_t* ids = fx.routing.ids.data();
  const float* w = fx.routing.weights.data();
  // The buffers hold 33 tokens: a size check after the first read would crash here.
  expect_names(strata_moe_layer_run(h, x, ids, w, int64_t{1} << 40, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "n_tokens");
  expect_names(strata_moe_layer_run(h, x, ids, w, INT64_MAX, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "n_tokens");
  expect_names(strata_moe_layer_run(h, x, ids, w, -5, fx.k, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "n_tokens");
  expect_names(strata_moe_layer_run(h, x, ids, w, fx.n_tokens, -1, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "k");
  expect_names(strata_moe_layer_run(h, x, ids, w, fx.n_tokens, INT32_MAX, y.data(), nullptr),
               STRATA_MOE_INVALID_ARGUMENT, "k");
  strata_moe_run_options many_threads = strata_moe::run_options();
  many_threads.arm = STRATA_MOE_ARM_PRODUCTION;
  many_threads.threads = 1 << 30;
  expect_names(strata_moe_layer_run(h, x, ids, w, fx.n_tokens, fx.k, y.data(), &many_threads),
               STRATA_MOE_INVALID_ARGUMENT, "options.threads");
  // A descriptor whose shape would overflow a byte count.
  strata_moe_layer_desc huge = desc;
  huge.gate.ne2 = huge.up.ne2 = huge.down.ne2 = huge.n_expert = int64_t{1} << 40;
  strata_moe_layer* none = nullptr;
  expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, &huge, &none),
               STRATA_MOE_INVALID_ARGUMENT, "ne2");
  EXPECT_EQ(none, nullptr);
}

TEST(CApi, RunsFromManyThreadsAtOnceAreAllowedAndExact) {
  Fixture fx("c_api_threads");
  const strata_moe_layer_desc desc = desc_of(fx.layer.weights);
  strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, desc);
  const int64_t n_y = fx.n_tokens * desc.d;
  std::vector<float> y_serial = test::poisoned(n_y);
  layer.run(fx.x.data(), fx.routing.ids.data(), fx.routing.weights.data(), fx.n_tokens, fx.k,
            y_serial.data());
  constexpr int kThreads = 6, kRunsEach = 4;
  std::vector<std::vector<float>> y(kThreads, test::poisoned(n_y));
  std::vector<strata_moe_status> status(kThreads, STRATA_MOE_OK);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) {
      }  // start together
      strata_moe_run_options options = strata_moe::run_options();
      options.arm = i % 2 ? STRATA_MOE_ARM_FUSED : STRATA_MOE_ARM_PRODUCTION;
      options.threads = 1 + i % 2;
      for (int r = 0; r < kRunsEach && status[i] == STRATA_MOE_OK; ++r)
        status[i] = strata_moe_layer_run(layer.get(), fx.x.data(), fx.routing.ids.data(),
                                         fx.routing.weights.data(), fx.n_tokens, fx.k,
                                         y[i].data(), &options);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(status[i], STRATA_MOE_OK) << "thread " << i;
    EXPECT_EQ(test::count_bitwise_diffs(y[i].data(), y_serial.data(), n_y), 0) << "thread " << i;
  }
}

TEST(CApi, DestroyOfNullIsANoOp) {
  strata_moe_layer_destroy(nullptr);
  SUCCEED();
}

TEST(CApi, NonFiniteWeightScalesAreRefusedAtCreation) {
  Fixture fx("c_api_nan_scale");
  strata_moe_layer_desc desc = desc_of(fx.layer.weights);
  ASSERT_EQ(strata_moe_check_weights(&desc), STRATA_MOE_OK) << strata_moe_last_error();
  // IQ3_S gate: the f16 d of expert 1, row 2, block 0 set to NaN.
  auto* block = const_cast<uint8_t*>(fx.layer.weights.gate.row(1, 2));
  block[0] = 0x00;
  block[1] = 0x7E;
  expect_names(strata_moe_check_weights(&desc), STRATA_MOE_INVALID_ARGUMENT,
               "expert 1, row 2, block 0");
  strata_moe_layer* none = nullptr;
  expect_names(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, &desc, &none),
               STRATA_MOE_INVALID_ARGUMENT, "ffn_gate_exps");
  EXPECT_EQ(none, nullptr);
  expect_names(strata_moe_check_weights(nullptr), STRATA_MOE_INVALID_ARGUMENT, "desc");
}

TEST(CApi, RouteRefusesNonFiniteRouterAndX) {
  constexpr int64_t kTokens = 3, kD = 32, kExperts = 4;
  std::vector<float> router(kExperts * kD, 0.01f), x(kTokens * kD, 0.5f);
  std::vector<int32_t> ids(kTokens * 2);
  std::vector<float> weights(kTokens * 2);
  const auto route = [&] {
    return strata_moe_route(router.data(), x.data(), kTokens, kD, kExperts, 2,
                            STRATA_MOE_GATING_SOFTMAX_TOPK_RENORM, ids.data(), weights.data(), 1);
  };
  ASSERT_EQ(route(), STRATA_MOE_OK) << strata_moe_last_error();
  router[2 * kD + 5] = NAN;
  expect_names(route(), STRATA_MOE_INVALID_ARGUMENT, "router: element [2, 5]");
  router[2 * kD + 5] = 0.01f;
  x[kD + 1] = INFINITY;
  expect_names(route(), STRATA_MOE_INVALID_ARGUMENT, "x: element [1, 1]");
  x[kD + 1] = 0.5f;
  expect_names(strata_moe_route(router.data(), x.data(), kTokens, kD, kExperts, 5,
                                STRATA_MOE_GATING_SOFTMAX_TOPK_RENORM, ids.data(), weights.data(),
                                1),
               STRATA_MOE_INVALID_ARGUMENT, "k");
  expect_names(strata_moe_route(router.data(), x.data(), int64_t{1} << 40, kD, kExperts, 2,
                                STRATA_MOE_GATING_SOFTMAX_TOPK_RENORM, ids.data(), weights.data(),
                                1),
               STRATA_MOE_INVALID_ARGUMENT, "n_tokens");
  expect_names(strata_moe_route(router.data(), x.data(), kTokens, kD, kExperts, 2,
                                STRATA_MOE_GATING_SOFTMAX_TOPK_RENORM, nullptr, weights.data(), 1),
               STRATA_MOE_INVALID_ARGUMENT, "ids");
}

// A NaN that an overflow inside gate/up leaves in y (finite_test.cpp) is refused by the run.
TEST(CApi, GateOverflowInsideTheLayerIsRefused) {
  const uint64_t seed = test::fresh_seed("gate_overflow_api");
  SCOPED_TRACE("seed " + std::to_string(seed));
  const test::OverflowCase o = test::make_gate_overflow_case(seed);
  strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, desc_of(o.c.layer.weights));
  for (strata_moe_numerics numerics : {STRATA_MOE_NUMERICS_Q8, STRATA_MOE_NUMERICS_Q10}) {
    strata_moe_run_options options = strata_moe::run_options();
    options.numerics = numerics;
    options.threads = 2;
    std::vector<float> y = test::poisoned(o.c.n_tokens * o.c.layer.weights.d);
    expect_names(strata_moe_layer_run(layer.get(), o.c.x.data(), o.c.routing.ids.data(),
                                      o.c.routing.weights.data(), o.c.n_tokens, o.c.k, y.data(),
                                      &options),
                 STRATA_MOE_INVALID_ARGUMENT, "the result overflows float32");
  }
}

}  // namespace
}  // namespace strata
