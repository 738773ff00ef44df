// The engine-facing C API: 16-bit activations and outputs, int64 ids, the caller's workspace, GGUF
// handles and the version. Typed runs must equal the f32 run on the widened inputs bitwise, and a
// 16-bit y must be exactly the f32 y rounded to nearest even.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "moe_check.hpp"
#include "strata_moe.h"
#include "strata_moe/layer.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

// ---- the conversions ------------------------------------------------------------------------

TEST(Dtype, F16RoundTripsEveryValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float wide = f16_to_f32(bits);
    if (std::isnan(wide)) {
      EXPECT_EQ(f32_to_f16(wide), static_cast<uint16_t>((bits & 0x8000u) | 0x7e00u)) << h;
      continue;
    }
    ASSERT_EQ(f32_to_f16(wide), bits) << "f16 bits " << h;
    ASSERT_EQ(static_cast<float>(static_cast<_Float16>(wide)), wide) << h;  // the widening is exact
  }
}

TEST(Dtype, F16NarrowingEqualsTheCompilersRoundToNearestEven) {
  const uint64_t seed = test::fresh_seed("dtype_f16");
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<float> values = {0.0f, -0.0f, 65504.0f, 65519.996f, 65520.0f, -65520.0f, 5.96046448e-8f,
                               2.98023224e-8f, 2.98023254e-8f, 8.940697e-8f, 6.1035156e-5f, 6.1035153e-5f,
                               std::numeric_limits<float>::infinity(), 1e30f, 1e-30f, 1.0009765625f};
  for (int i = 0; i < 2000000; ++i) values.push_back(f32_from_bits(static_cast<uint32_t>(rng())));
  for (float v : values) {
    if (std::isnan(v)) continue;
    const _Float16 ref = static_cast<_Float16>(v);
    uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, 2);
    ASSERT_EQ(f32_to_f16(v), ref_bits) << "f32 bits " << f32_bits(v);
  }
}

// Reference: the two bf16 neighbours of v and a comparison in double, ties to the even one.
uint16_t bf16_reference(float v) {
  const uint32_t u = f32_bits(v);
  const uint16_t down = static_cast<uint16_t>(u >> 16);  // toward zero
  if ((u & 0xffffu) == 0) return down;
  const uint16_t up = static_cast<uint16_t>(down + 1);   // away from zero (may be inf)
  const double dv = std::fabs(static_cast<double>(v));
  const double lo = std::fabs(static_cast<double>(bf16_to_f32(down)));
  const double hi = (up & 0x7fffu) == 0x7f80u ? std::ldexp(1.0, 128) : std::fabs(static_cast<double>(bf16_to_f32(up)));
  if (dv - lo < hi - dv) return down;
  if (dv - lo > hi - dv) return up;
  return (down & 1u) == 0 ? down : up;
}

TEST(Dtype, Bf16NarrowingRoundsToNearestEven) {
  const uint64_t seed = test::fresh_seed("dtype_bf16");
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000000; ++i) {
    const float v = f32_from_bits(static_cast<uint32_t>(rng()));
    if (std::isnan(v)) {
      EXPECT_EQ(f32_to_bf16(v) & 0x7fc0u, 0x7fc0u);
      continue;
    }
    ASSERT_EQ(f32_to_bf16(v), bf16_reference(v)) << "f32 bits " << f32_bits(v);
  }
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3f808000u)), 0x3f80u);  // tie, even stays
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3f818000u)), 0x3f82u);  // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x7f7fffffu)), 0x7f80u);  // past the largest: inf
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (!std::isnan(bf16_to_f32(static_cast<uint16_t>(h)))) {
      ASSERT_EQ(f32_to_bf16(bf16_to_f32(static_cast<uint16_t>(h))), h);
    }
  }
}

// ---- typed runs -----------------------------------------------------------------------------

strata_moe_tensor_desc desc_of(const ExpertTensor& t) {
  return {static_cast<uint32_t>(t.type), t.data, t.in_features, t.out_features, t.n_expert, 0, t.name.c_str()};
}

struct Case {
  uint64_t seed;
  synth::SyntheticLayer layer;
  synth::Routing routing;
  std::vector<float> x;
  int64_t n_tokens = 29;
  int k = 3;

  explicit Case(const char* salt) : seed(test::fresh_seed(salt)) {
    synth::LayerSpec spec;
    spec.d = 256;
    spec.f = 128;
    spec.n_expert = 8;
    spec.seed = seed;
    layer = synth::make_layer(spec);
    routing = synth::skewed_routing(n_tokens, spec.n_expert, k, seed + 1);
    x = synth::random_activations(n_tokens, spec.d, seed + 2);
  }
  strata_moe_layer_desc desc() const {
    const MoeLayerWeights& w = layer.weights;
    return {w.d, w.f, w.n_expert, desc_of(w.gate), desc_of(w.up), desc_of(w.down)};
  }
};

template <class To, class Fn>
std::vector<To> map(const std::vector<float>& in, Fn fn) {
  std::vector<To> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) out[i] = fn(in[i]);
  return out;
}

std::vector<uint16_t> poisoned16(size_t n) {
  return std::vector<uint16_t>(n, 0x7e01u);
}

int64_t count_not_finite(const std::vector<float>& y) {
  int64_t n = 0;
  for (float v : y) n += !std::isfinite(v);
  return n;
}

void expect_names(strata_moe_status status, strata_moe_status expected, const std::string& name) {
  EXPECT_EQ(status, expected) << strata_moe_last_error();
  EXPECT_NE(std::string(strata_moe_last_error()).find(name), std::string::npos)
      << "message '" << strata_moe_last_error() << "' does not name " << name;
}

TEST(CApiTyped, SixteenBitArraysEqualTheF32RunOnTheirWidenedValues) {
  Case c("c_api_typed");
  SCOPED_TRACE("seed " + std::to_string(c.seed));
  const int64_t d = c.layer.weights.d, n_y = c.n_tokens * d;
  strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, c.desc());
  for (strata_moe_dtype act : {STRATA_MOE_DTYPE_F16, STRATA_MOE_DTYPE_BF16}) {
    const bool f16 = act == STRATA_MOE_DTYPE_F16;
    const std::vector<uint16_t> x16 = map<uint16_t>(c.x, f16 ? f32_to_f16 : f32_to_bf16);
    const std::vector<uint16_t> w16 = map<uint16_t>(c.routing.weights, f16 ? f32_to_f16 : f32_to_bf16);
    std::vector<float> x_wide(x16.size()), w_wide(w16.size());
    for (size_t i = 0; i < x16.size(); ++i) x_wide[i] = f16 ? f16_to_f32(x16[i]) : bf16_to_f32(x16[i]);
    for (size_t i = 0; i < w16.size(); ++i) w_wide[i] = f16 ? f16_to_f32(w16[i]) : bf16_to_f32(w16[i]);
    std::vector<int64_t> ids64(c.routing.ids.begin(), c.routing.ids.end());
    for (auto numerics : {STRATA_MOE_NUMERICS_Q8, STRATA_MOE_NUMERICS_Q10}) {
      SCOPED_TRACE(std::string(f16 ? "f16" : "bf16") + (numerics == STRATA_MOE_NUMERICS_Q8 ? " q8" : " q10"));
      strata_moe_run_options options = strata_moe::run_options();
      options.numerics = numerics;
      options.arm = STRATA_MOE_ARM_PRODUCTION;
      std::vector<float> y_ref = test::poisoned(n_y);
      layer.run(x_wide.data(), c.routing.ids.data(), w_wide.data(), c.n_tokens, c.k, y_ref.data(), &options);
      ASSERT_EQ(count_not_finite(y_ref), 0);

      for (strata_moe_arm arm : {STRATA_MOE_ARM_PRODUCTION, STRATA_MOE_ARM_FUSED}) {
        options.arm = arm;
        strata_moe_run_args args;
        strata_moe_run_args_init(&args);
        args.x = x16.data();
        args.x_dtype = act;
        args.ids = ids64.data();
        args.ids_dtype = STRATA_MOE_DTYPE_I64;
        args.weights = w16.data();
        args.weights_dtype = act;
        args.n_tokens = c.n_tokens;
        args.k = c.k;
        args.options = &options;
        // f32 y: bitwise the f32 run.
        std::vector<float> y32 = test::poisoned(n_y);
        args.y = y32.data();
        args.y_dtype = STRATA_MOE_DTYPE_F32;
        ASSERT_EQ(strata_moe_layer_run_ex(layer.get(), &args), STRATA_MOE_OK) << strata_moe_last_error();
        EXPECT_EQ(test::count_bitwise_diffs(y32.data(), y_ref.data(), n_y), 0);
        // 16-bit y, with a caller workspace filled with garbage: exactly the f32 y rounded.
        std::vector<uint16_t> y16 = poisoned16(static_cast<size_t>(n_y));
        args.y = y16.data();
        args.y_dtype = act;
        size_t bytes = 0;
        ASSERT_EQ(strata_moe_workspace_bytes(layer.get(), &args, &bytes), STRATA_MOE_OK) << strata_moe_last_error();
        EXPECT_GE(bytes, static_cast<size_t>(n_y) * 4);
        std::vector<uint8_t> storage(bytes + 256, 0xa5);
        args.workspace = storage.data() + (256 - reinterpret_cast<uintptr_t>(storage.data()) % 256) % 256;
        args.workspace_bytes = bytes;
        ASSERT_EQ(strata_moe_layer_run_ex(layer.get(), &args), STRATA_MOE_OK) << strata_moe_last_error();
        int64_t differ = 0;
        for (int64_t i = 0; i < n_y; ++i)
          differ += y16[static_cast<size_t>(i)] != (f16 ? f32_to_f16(y_ref[static_cast<size_t>(i)])
                                                        : f32_to_bf16(y_ref[static_cast<size_t>(i)]));
        EXPECT_EQ(differ, 0);
      }
    }
  }
}

TEST(CApiTyped, WorkspaceAndArgsMisuseIsRefusedByName) {
  Case c("c_api_typed_misuse");
  SCOPED_TRACE("seed " + std::to_string(c.seed));
  const int64_t n_y = c.n_tokens * c.layer.weights.d;
  strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, c.desc());
  EXPECT_EQ(strata_moe_layer_backend(layer.get()), STRATA_MOE_BACKEND_CPU);
  std::vector<uint16_t> x16 = map<uint16_t>(c.x, f32_to_f16);
  std::vector<float> y = test::poisoned(n_y);
  strata_moe_run_args args;
  strata_moe_run_args_init(&args);
  args.x = x16.data();
  args.x_dtype = STRATA_MOE_DTYPE_F16;
  args.ids = c.routing.ids.data();
  args.weights = c.routing.weights.data();
  args.y = y.data();
  args.n_tokens = c.n_tokens;
  args.k = c.k;
  size_t bytes = 0;
  ASSERT_EQ(strata_moe_workspace_bytes(layer.get(), &args, &bytes), STRATA_MOE_OK);
  std::vector<uint8_t> storage(bytes + 512);
  uint8_t* aligned = storage.data() + (256 - reinterpret_cast<uintptr_t>(storage.data()) % 256) % 256;

  strata_moe_run_args bad = args;
  bad.workspace = aligned;
  bad.workspace_bytes = bytes - 1;
  expect_names(strata_moe_layer_run_ex(layer.get(), &bad), STRATA_MOE_INVALID_ARGUMENT, "workspace_bytes");
  bad.workspace = aligned + 8;
  bad.workspace_bytes = bytes;
  expect_names(strata_moe_layer_run_ex(layer.get(), &bad), STRATA_MOE_INVALID_ARGUMENT, "aligned");
  bad = args;
  bad.workspace_bytes = 64;
  expect_names(strata_moe_layer_run_ex(layer.get(), &bad), STRATA_MOE_INVALID_ARGUMENT, "workspace");
  bad = args;
  bad.x_dtype = STRATA_MOE_DTYPE_I32;
  expect_names(strata_moe_layer_run_ex(layer.get(), &bad), STRATA_MOE_INVALID_ARGUMENT, "x_dtype");
  bad = args;
  bad.ids_dtype = STRATA_MOE_DTYPE_F16;
  expect_names(strata_moe_layer_run_ex(layer.get(), &bad), STRATA_MOE_INVALID_ARGUMENT, "ids_dtype");
  bad = args;
  bad.y_dtype = static_cast<strata_moe_dtype>(9);
  expect_names(strata_moe_layer_run_ex(layer.get(), &bad), STRATA_MOE_INVALID_ARGUMENT, "y_dtype");
  bad = args;
  bad.struct_size = 16;
  expect_names(strata_moe_layer_run_ex(layer.get(), &bad), STRATA_MOE_INVALID_ARGUMENT, "args.struct_size");
  bad = args;
  bad.y = nullptr;
  expect_names(strata_moe_layer_run_ex(layer.get(), &bad), STRATA_MOE_INVALID_ARGUMENT, "args.y");
  bad = args;
  bad.k = 0;
  expect_names(strata_moe_workspace_bytes(layer.get(), &bad, &bytes), STRATA_MOE_INVALID_ARGUMENT, "k");
  expect_names(strata_moe_layer_run_ex(layer.get(), nullptr), STRATA_MOE_INVALID_ARGUMENT, "args");
  expect_names(strata_moe_layer_run_ex(nullptr, &args), STRATA_MOE_INVALID_ARGUMENT, "layer");
  // An int64 id that would truncate to a valid int32 id is refused, not run as that id.
  std::vector<int64_t> ids64(c.routing.ids.begin(), c.routing.ids.end());
  ids64[5] = (int64_t{1} << 32) + ids64[5];
  bad = args;
  bad.ids = ids64.data();
  bad.ids_dtype = STRATA_MOE_DTYPE_I64;
  expect_names(strata_moe_layer_run_ex(layer.get(), &bad), STRATA_MOE_INVALID_ARGUMENT, "ids");
  // After every refusal a good run still works and y is written.
  ASSERT_EQ(strata_moe_layer_run_ex(layer.get(), &args), STRATA_MOE_OK) << strata_moe_last_error();
  EXPECT_EQ(count_not_finite(y), 0);
}

TEST(CApiTyped, CppWrapperRunsTypedArgs) {
  Case c("c_api_typed_cpp");
  SCOPED_TRACE("seed " + std::to_string(c.seed));
  const int64_t n_y = c.n_tokens * c.layer.weights.d;
  strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, c.desc());
  std::vector<float> y_ref = test::poisoned(n_y);
  layer.run(c.x.data(), c.routing.ids.data(), c.routing.weights.data(), c.n_tokens, c.k, y_ref.data());
  strata_moe_run_args args = strata_moe::run_args();
  std::vector<uint16_t> y16 = poisoned16(static_cast<size_t>(n_y));
  args.x = c.x.data();
  args.ids = c.routing.ids.data();
  args.weights = c.routing.weights.data();
  args.y = y16.data();
  args.y_dtype = STRATA_MOE_DTYPE_BF16;
  args.n_tokens = c.n_tokens;
  args.k = c.k;
  EXPECT_EQ(layer.workspace_bytes(args), static_cast<size_t>(n_y) * 4);
  layer.run(args);  // no workspace: the layer's own staging
  int64_t differ = 0;
  for (int64_t i = 0; i < n_y; ++i) differ += y16[static_cast<size_t>(i)] != f32_to_bf16(y_ref[static_cast<size_t>(i)]);
  EXPECT_EQ(differ, 0);
  args.k = 0;
  try {
    layer.run(args);
    ADD_FAILURE() << "k = 0 was accepted";
  } catch (const strata_moe::Error& e) {
    EXPECT_EQ(e.status(), STRATA_MOE_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("k"), std::string::npos) << e.what();
  }
}

TEST(CApiTyped, GgufHandleGivesTheCliLayer) {
  const std::string path = (test::data_dir() / "vectors" / "moe" / "model.gguf").string();
  strata_moe_gguf* file = nullptr;
  ASSERT_EQ(strata_moe_gguf_open(path.c_str(), &file), STRATA_MOE_OK) << strata_moe_last_error();
  int count = -1;
  ASSERT_EQ(strata_moe_gguf_moe_layers(file, nullptr, 0, &count), STRATA_MOE_OK);
  ASSERT_EQ(count, 2);
  int layers[2] = {-1, -1};
  ASSERT_EQ(strata_moe_gguf_moe_layers(file, layers, 2, &count), STRATA_MOE_OK);
  EXPECT_EQ(layers[0], 0);
  EXPECT_EQ(layers[1], 1);
  strata_moe_gguf_layer info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(strata_moe_gguf_layer_info(file, 1, &info), STRATA_MOE_OK) << strata_moe_last_error();
  EXPECT_EQ(info.layer, 1);
  EXPECT_EQ(info.desc.d, 512);
  EXPECT_EQ(info.desc.f, 192);
  EXPECT_EQ(info.desc.n_expert, 16);
  EXPECT_EQ(info.n_expert_used, 4);
  EXPECT_NE(info.router, nullptr);
  EXPECT_EQ(info.desc.gate.ggml_type, 21u);
  EXPECT_EQ(info.desc.down.ggml_type, 42u);
  size_t span = 0;
  ASSERT_EQ(strata_moe_tensor_span_bytes(&info.desc.down, &span), STRATA_MOE_OK);
  EXPECT_EQ(span, static_cast<size_t>(16) * 512 * (192 / 64) * 18);  // Q2_0: 64 values in 18 bytes
  expect_names(strata_moe_gguf_layer_info(file, 7, &info), STRATA_MOE_INVALID_ARGUMENT, "[0, 1]");
  info.struct_size = 8;
  expect_names(strata_moe_gguf_layer_info(file, 0, &info), STRATA_MOE_INVALID_ARGUMENT, "struct_size");
  strata_moe_gguf_close(file);
  strata_moe_gguf* missing = reinterpret_cast<strata_moe_gguf*>(0x1);
  EXPECT_EQ(strata_moe_gguf_open("/nonexistent/model.gguf", &missing), STRATA_MOE_IO) << strata_moe_last_error();
  EXPECT_EQ(missing, nullptr);
}

TEST(CApiTyped, VersionIsTheProjectsAndTheCommitIsHexOrEmpty) {
  const std::string expected = std::to_string(STRATA_MOE_VERSION_MAJOR) + "." +
                               std::to_string(STRATA_MOE_VERSION_MINOR) + "." +
                               std::to_string(STRATA_MOE_VERSION_PATCH);
  EXPECT_EQ(std::string(strata_moe_version()), expected);
  const std::string commit = strata_moe_git_commit();
  EXPECT_TRUE(commit.empty() || (commit.size() == 40 && commit.find_first_not_of("0123456789abcdef") ==
                                                              std::string::npos))
      << commit;
}

}  // namespace
}  // namespace strata
