// Illegal arguments on the CUDA entry points (cuda::run_layer for each q8 arm request and the q10
// profile, the fused-wmma arm's own entry point) and through the C API on a CUDA layer
// (strata_moe_layer_run, strata_moe_layer_run_ex): k > E, T*k >= 2^31, null and misaligned
// pointers, host memory. Each is refused with the invalid-argument status and a message naming
// the argument, before anything runs; the device stays usable (a valid run afterwards gives the
// CPU arm's bits).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cpu/moe_cpu.hpp"
#include "cuda/backend/run_layer.hpp"
#include "cuda/fused_wmma/wmma_arm.hpp"
#include "gpu_test_util.hpp"
#include "layer_run.hpp"
#include "moe_check.hpp"
#include "strata_moe.h"
#include "synthetic_case.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

// Whether `text` holds `word` with no identifier character on either side.
bool names(const std::string& text, const std::string& word) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !ident(text[at - 1]);
    const bool right = at + word.size() == text.size() || !ident(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

// Runs `call`, which must throw Error(kInvalidArgument) whose message names every one of `words`.
void expect_refused(const std::function<void()>& call, const std::vector<std::string>& words,
                    const std::string& what) {
  SCOPED_TRACE(what);
  try {
    call();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument) << e.what();
    for (const std::string& w : words) EXPECT_TRUE(names(e.what(), w)) << "no '" << w << "' in: " << e.what();
  }
}

// One small IQ3_S/Q2_0 layer (carried by every arm and both profiles) on the device.
struct Fixture {
  test::SyntheticCase sc;
  test::DeviceLayerCopy dev;
  uint64_t seed;

  explicit Fixture(uint64_t s)
      : sc(test::make_synthetic_case(256, 256, 8, 2, 33, test::CaseRouting::kSkewed, s)),
        dev(test::upload_layer(sc.layer.weights)),
        seed(s) {}
};

// A request of cuda::run_layer: the arm and the profile.
struct Request {
  const char* name;
  Arm arm;
  Numerics numerics;
};

const Request kRequests[] = {{"production", Arm::kProduction, Numerics::kQ8},
                             {"fused_sm80", Arm::kFusedSm80, Numerics::kQ8},
                             {"fused_hopper", Arm::kFusedHopper, Numerics::kQ8},
                             {"fused_wmma", Arm::kFusedWmma, Numerics::kQ8},
                             {"q10_sm80", Arm::kFusedSm80, Numerics::kQ10},
                             {"q10_hopper", Arm::kFusedHopper, Numerics::kQ10},
                             {"q10_wmma", Arm::kFusedWmma, Numerics::kQ10}};

void PrintTo(const Request& r, std::ostream* os) { *os << r.name; }

class CudaRunLayerArguments : public ::testing::TestWithParam<Request> {};

TEST_P(CudaRunLayerArguments, RefusedNamingTheArgument) {
  STRATA_REQUIRE_GPU();
  const Request r = GetParam();
  const Fixture fx(test::fresh_seed("arguments"));
  SCOPED_TRACE(std::string(r.name) + " seed " + std::to_string(fx.seed));
  const MoeLayerWeights& w = fx.dev.weights;
  test::DeviceRun run(fx.sc.inputs(), w.d);
  cuda::Workspace ws;
  auto call = [&](cuda::DeviceInputs in, float* y) {
    return [&, in, y] { cuda::run_layer(w, in, r.arm, ws, nullptr, y, nullptr, r.numerics); };
  };
  const cuda::DeviceInputs good = run.inputs;
  cuda::DeviceInputs in = good;

  in.k = static_cast<int>(w.n_expert) + 1;
  expect_refused(call(in, run.y.get()), {"k"}, "k > E");
  in = good;
  in.n_tokens = int64_t{1} << 30;  // T * k = 2^31 with k = 2: refused before anything is read
  expect_refused(call(in, run.y.get()), {"n_tokens", "k"}, "T * k = 2^31");
  for (int which = 0; which < 4; ++which) {
    in = good;
    float* y = run.y.get();
    const char* name[4] = {"x", "ids", "weights", "y"};
    if (which == 0) in.x = nullptr;
    if (which == 1) in.ids = nullptr;
    if (which == 2) in.weights = nullptr;
    if (which == 3) y = nullptr;
    expect_refused(call(in, y), {name[which]}, std::string("null ") + name[which]);
  }
  in = good;
  in.x = good.x + 1;  // 4-byte aligned, not 16
  expect_refused(call(in, run.y.get()), {"x"}, "x not 16-byte aligned");

  // Nothing ran and nothing is broken: the valid run gives the CPU production arm's bits (q8) or
  // the q10 CPU arm's.
  std::vector<float> y_cpu = test::poisoned(run.n_y);
  run_layer_cpu(fx.sc.layer.weights, fx.sc.inputs(), Arm::kProduction, 0, y_cpu.data(), nullptr, r.numerics);
  const std::vector<float> y = run.run(w, r.arm, ws, nullptr, r.numerics);
  EXPECT_EQ(test::count_bitwise_diffs(y.data(), y_cpu.data(), run.n_y), 0);
}

INSTANTIATE_TEST_SUITE_P(Requests, CudaRunLayerArguments, ::testing::ValuesIn(kRequests),
                         [](const auto& info) { return std::string(info.param.name); });

// The fused-wmma arm's own entry point checks the sizes too.
TEST(CudaWmmaEntryArguments, SizesRefusedNamingTheArgument) {
  STRATA_REQUIRE_GPU();
  const Fixture fx(test::fresh_seed("wmma_arguments"));
  SCOPED_TRACE("seed " + std::to_string(fx.seed));
  const MoeLayerWeights& w = fx.dev.weights;
  test::DeviceRun run(fx.sc.inputs(), w.d);
  cuda::fused_wmma::WmmaLayerWorkspace ws;
  auto call = [&](int64_t n_tokens, int k) {
    return [&, n_tokens, k] {
      cuda::fused_wmma::run_layer_wmma(w, run.x.get(), run.ids.get(), run.weights.get(), n_tokens, k, ws, nullptr,
                                       run.y.get());
    };
  };
  expect_refused(call(33, static_cast<int>(w.n_expert) + 1), {"k"}, "k > E");
  expect_refused(call(int64_t{1} << 30, 2), {"n_tokens", "k"}, "T * k = 2^31");
}

// ---- the C API on a CUDA layer -----------------------------------------------------------------
strata_moe_tensor_desc desc_of(const ExpertTensor& t) {
  return {static_cast<uint32_t>(t.type), t.data, t.in_features, t.out_features, t.n_expert, t.expert_stride_bytes,
          t.name.c_str()};
}

// The status must be invalid-argument and the last error name every one of `words`.
void expect_status(strata_moe_status status, const std::vector<std::string>& words, const std::string& what) {
  SCOPED_TRACE(what);
  const std::string said = strata_moe_last_error();
  EXPECT_EQ(status, STRATA_MOE_INVALID_ARGUMENT) << said;
  for (const std::string& w : words) EXPECT_TRUE(names(said, w)) << "no '" << w << "' in: " << said;
}

TEST(CApiCudaArguments, RefusedNamingTheArgument) {
  STRATA_REQUIRE_GPU();
  const Fixture fx(test::fresh_seed("c_api_arguments"));
  SCOPED_TRACE("seed " + std::to_string(fx.seed));
  const MoeLayerWeights& w = fx.dev.weights;
  const strata_moe_layer_desc desc{w.d, w.f, w.n_expert, desc_of(w.gate), desc_of(w.up), desc_of(w.down)};
  strata_moe_layer* layer = nullptr;
  ASSERT_EQ(strata_moe_layer_create(STRATA_MOE_BACKEND_CUDA, &desc, &layer), STRATA_MOE_OK) << strata_moe_last_error();
  test::DeviceRun run(fx.sc.inputs(), w.d);
  const float* x = run.x.get();
  const int32_t* ids = run.ids.get();
  const float* wt = run.weights.get();
  float* y = run.y.get();
  const int64_t T = fx.sc.n_tokens;
  const int k = fx.sc.k;
  const int64_t E = w.n_expert;

  // strata_moe_layer_run
  expect_status(strata_moe_layer_run(layer, x, ids, wt, T, static_cast<int>(E) + 1, y, nullptr), {"k"}, "run: k > E");
  // T = 2^28 (the largest T) with k = 8: T * k = 2^31
  expect_status(strata_moe_layer_run(layer, x, ids, wt, int64_t{1} << 28, 8, y, nullptr), {"n_tokens", "k"},
                "run: T * k = 2^31");
  expect_status(strata_moe_layer_run(layer, nullptr, ids, wt, T, k, y, nullptr), {"x"}, "run: null x");
  expect_status(strata_moe_layer_run(layer, x, nullptr, wt, T, k, y, nullptr), {"ids"}, "run: null ids");
  expect_status(strata_moe_layer_run(layer, x, ids, nullptr, T, k, y, nullptr), {"weights"}, "run: null weights");
  expect_status(strata_moe_layer_run(layer, x, ids, wt, T, k, nullptr, nullptr), {"y"}, "run: null y");
  const auto* bytes_x = reinterpret_cast<const uint8_t*>(x);
  expect_status(strata_moe_layer_run(layer, reinterpret_cast<const float*>(bytes_x + 2), ids, wt, T, k, y, nullptr),
                {"x"}, "run: x 2 bytes off");
  expect_status(strata_moe_layer_run(layer, x + 1, ids, wt, T, k, y, nullptr), {"x"}, "run: x not 16-byte aligned");
  expect_status(strata_moe_layer_run(layer, x, reinterpret_cast<const int32_t*>(reinterpret_cast<const uint8_t*>(ids) + 2),
                                     wt, T, k, y, nullptr),
                {"ids"}, "run: ids 2 bytes off");
  const std::vector<float> host_x(fx.sc.x);
  expect_status(strata_moe_layer_run(layer, host_x.data(), ids, wt, T, k, y, nullptr), {"x"}, "run: host x");

  // strata_moe_layer_run_ex
  strata_moe_run_args args{};
  strata_moe_run_args_init(&args);
  auto reset = [&] {
    strata_moe_run_args_init(&args);
    args.x = x;
    args.ids = ids;
    args.weights = wt;
    args.y = y;
    args.n_tokens = T;
    args.k = k;
  };
  reset();
  args.k = static_cast<int>(E) + 1;
  expect_status(strata_moe_layer_run_ex(layer, &args), {"k"}, "run_ex: k > E");
  reset();
  args.n_tokens = int64_t{1} << 28;
  args.k = 8;
  expect_status(strata_moe_layer_run_ex(layer, &args), {"n_tokens", "k"}, "run_ex: T * k = 2^31");
  reset();
  args.x = nullptr;
  expect_status(strata_moe_layer_run_ex(layer, &args), {"x"}, "run_ex: null x");
  reset();
  args.ids = nullptr;
  expect_status(strata_moe_layer_run_ex(layer, &args), {"ids"}, "run_ex: null ids");
  reset();
  args.weights = nullptr;
  expect_status(strata_moe_layer_run_ex(layer, &args), {"weights"}, "run_ex: null weights");
  reset();
  args.y = nullptr;
  expect_status(strata_moe_layer_run_ex(layer, &args), {"y"}, "run_ex: null y");
  reset();
  args.x = bytes_x + 2;
  expect_status(strata_moe_layer_run_ex(layer, &args), {"x"}, "run_ex: x 2 bytes off");
  reset();
  args.x = x + 1;
  expect_status(strata_moe_layer_run_ex(layer, &args), {"x"}, "run_ex: x not 16-byte aligned");

  // The valid call still runs and gives the CPU production arm's bits.
  strata_moe_run_options options{};
  strata_moe_run_options_init(&options);
  options.arm = STRATA_MOE_ARM_PRODUCTION;
  options.numerics = STRATA_MOE_NUMERICS_Q8;
  run.poison_y();
  ASSERT_EQ(strata_moe_layer_run(layer, x, ids, wt, T, k, y, &options), STRATA_MOE_OK) << strata_moe_last_error();
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> y_cpu = test::poisoned(run.n_y);
  run_layer_cpu(fx.sc.layer.weights, fx.sc.inputs(), Arm::kProduction, 0, y_cpu.data());
  const std::vector<float> got = run.y_host();
  EXPECT_EQ(test::count_bitwise_diffs(got.data(), y_cpu.data(), run.n_y), 0);
  strata_moe_layer_destroy(layer);
}

// Every launch of a test process is checked (cuda/common/check.hpp): built in, switched on before
// main, paused only while a guard lives. Host logic: runs without a GPU.
TEST(SyncCheck, OnInTestProcessesAndPausedOnlyByTheGuard) {
  EXPECT_TRUE(cuda::kSyncCheckBuilt);
  EXPECT_TRUE(cuda::sync_check());
  {
    const test::SyncCheckPause pause;
    EXPECT_FALSE(cuda::sync_check());
  }
  EXPECT_TRUE(cuda::sync_check());
}

}  // namespace
}  // namespace strata
