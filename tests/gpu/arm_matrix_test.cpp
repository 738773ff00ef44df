// Every q8 CUDA arm x format pair x edge case in one parametrised fixture: the arm that runs (or
// the production arm it falls back to, for a pair it does not carry) gives the CPU production
// arm's bits, y and every intermediate it exposes, within the declared bounds of the
// same-quantisation oracle, the same bits over a second workspace and stream, and the same bits
// for the tokens split into chunks as in one chunk. The arm-specific checks (forced tiles, the
// wgmma down kernel, the chain loader, device traps) stay in the arms' own test files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <ostream>
#include <memory>
#include <string>
#include <vector>

#include "bounds.hpp"
#include "common/error.hpp"
#include "cpu/moe_cpu.hpp"
#include "cuda/backend/run_layer.hpp"
#include "cuda/fused/fused_arm.hpp"
#include "cuda/fused_hopper/hopper_arm.hpp"
#include "cuda/fused_wmma/wmma_arm.hpp"
#include "gpu_test_util.hpp"
#include "layer_run.hpp"
#include "moe_check.hpp"
#include "reference/oracle.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

using test::Stage;
namespace wmma = cuda::fused_wmma;

// ---- the axes --------------------------------------------------------------------------------
enum class ArmUnderTest { kProduction, kFusedSm80, kFusedHopper, kFusedWmma };

const char* arm_label(ArmUnderTest a) {
  switch (a) {
    case ArmUnderTest::kProduction: return "production";
    case ArmUnderTest::kFusedSm80: return "fused_sm80";
    case ArmUnderTest::kFusedHopper: return "fused_hopper";
    case ArmUnderTest::kFusedWmma: return "fused_wmma";
  }
  return "?";
}

struct FormatPair {
  const char* name;
  GgmlType gate_up, down;
};

// The production arm carries IQ3_S and Q2_0 in any position; the fused arms IQ3_S gate/up with
// Q2_0 down (the other pairs check their fallback to production).
const FormatPair kFormatPairs[] = {{"iq3s_q20", GgmlType::IQ3_S, GgmlType::Q2_0},
                                   {"q20_iq3s", GgmlType::Q2_0, GgmlType::IQ3_S},
                                   {"iq3s_iq3s", GgmlType::IQ3_S, GgmlType::IQ3_S},
                                   {"q20_q20", GgmlType::Q2_0, GgmlType::Q2_0}};

enum class Routing { kSkewed, kUniform, kSingleExpert, kCountedAroundTiles };

// d and f are multiples of 256 (an IQ3_S row, on either side of the layer).
struct EdgeCase {
  const char* name;
  int64_t d, f, n_expert;
  int k;
  int64_t n_tokens;
  Routing routing;
};

const EdgeCase kEdgeCases[] = {
    {"t1", 256, 256, 8, 2, 1, Routing::kUniform},
    {"t17", 256, 512, 8, 3, 17, Routing::kSkewed},
    {"k1", 512, 256, 16, 1, 29, Routing::kUniform},
    {"one_row_experts", 256, 256, 64, 1, 5, Routing::kUniform},
    {"single_expert_many_rows", 256, 256, 16, 2, 300, Routing::kSingleExpert},
    // experts of 0, 1, 16, 17, 31, 32, 33, 64, 65 pairs: both sides of every arm's row tile
    {"counts_around_tiles", 512, 256, 16, 3, 100, Routing::kCountedAroundTiles},
    {"many_tiles", 768, 512, 8, 4, 400, Routing::kUniform},
};

struct MatrixCase {
  ArmUnderTest arm;
  FormatPair pair;
  EdgeCase edge;
};

std::vector<MatrixCase> all_cases() {
  std::vector<MatrixCase> cases;
  for (ArmUnderTest arm : {ArmUnderTest::kProduction, ArmUnderTest::kFusedSm80, ArmUnderTest::kFusedHopper,
                           ArmUnderTest::kFusedWmma})
    for (const FormatPair& pair : kFormatPairs)
      for (const EdgeCase& edge : kEdgeCases) cases.push_back({arm, pair, edge});
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<MatrixCase>& info) {
  return std::string(arm_label(info.param.arm)) + "_" + info.param.pair.name + "_" + info.param.edge.name;
}

void PrintTo(const MatrixCase& c, std::ostream* os) { *os << case_name({c, 0}); }

// ---- one case's host data and the CPU reference, built once per (pair, edge) and process ------
struct CaseData {
  synth::SyntheticLayer layer;
  synth::Routing routing;
  std::vector<float> x;
  test::DeviceLayerCopy device;
  std::vector<float> y_cpu;
  CpuDebugOutputs cpu;
  uint64_t seed = 0;

  LayerInputs inputs(int64_t n_tokens, int k) const {
    return LayerInputs{x.data(), routing.ids.data(), routing.weights.data(), n_tokens, k};
  }
};

const CaseData& case_data(const FormatPair& pair, const EdgeCase& e) {
  static std::map<std::string, std::unique_ptr<CaseData>> cache;
  const std::string key = std::string(pair.name) + "/" + e.name;
  auto found = cache.find(key);
  if (found != cache.end()) return *found->second;
  auto c = std::make_unique<CaseData>();  // cached only once complete
  c->seed = test::shared_seed(key);
  synth::LayerSpec spec;
  spec.d = e.d;
  spec.f = e.f;
  spec.n_expert = e.n_expert;
  spec.gate_type = spec.up_type = pair.gate_up;
  spec.down_type = pair.down;
  spec.seed = c->seed;
  c->layer = synth::make_layer(spec);
  switch (e.routing) {
    case Routing::kSkewed: c->routing = synth::skewed_routing(e.n_tokens, e.n_expert, e.k, c->seed + 1); break;
    case Routing::kUniform: c->routing = synth::uniform_routing(e.n_tokens, e.n_expert, e.k, c->seed + 1); break;
    case Routing::kSingleExpert:
      c->routing = synth::single_expert_routing(e.n_tokens, e.n_expert, e.k, c->seed + 1);
      break;
    case Routing::kCountedAroundTiles:
      c->routing =
          test::counted_routing(e.n_tokens, e.n_expert, e.k, {0, 1, 16, 17, 31, 32, 33, 64, 65}, c->seed + 1);
      break;
  }
  c->x = synth::random_activations(e.n_tokens, e.d, c->seed + 2);
  c->device = test::upload_layer(c->layer.weights);
  const LayerInputs in = c->inputs(e.n_tokens, e.k);
  c->y_cpu = test::poisoned(e.n_tokens * e.d);
  run_layer_cpu(c->layer.weights, in, Arm::kProduction, 0, c->y_cpu.data(), &c->cpu);
  return *cache.emplace(key, std::move(c)).first->second;
}

// ---- running one arm ----------------------------------------------------------------------------
// What one run gives back: y and the intermediates in (token, slot) order.
struct ArmRun {
  std::vector<float> y, gate, up, h, down;
};

// Whether the arm itself carries the layer (else the request runs the production arm).
bool arm_carries(ArmUnderTest arm, const MoeLayerWeights& w) {
  switch (arm) {
    case ArmUnderTest::kProduction: return cuda::production_supports(w);
    case ArmUnderTest::kFusedSm80: return cuda::fused::fused_supports(w);
    case ArmUnderTest::kFusedHopper:  // the registry's view: gate/up and down of the arm's formats
      return cuda::choose(w, Arm::kFusedHopper, Numerics::kQ8).arm == Arm::kFusedHopper;
    case ArmUnderTest::kFusedWmma: return wmma::wmma_supports(w);
  }
  return false;
}

// The one place an arm is selected: run_layer's named arm (the fused-wmma arm through its own
// entry point, which refuses a layer it does not carry). A named arm that does not carry the layer
// runs the production arm, and the report says so.
// Intermediates are poisoned before the measured run; with `intermediates` off only y comes back.
ArmRun run_arm(ArmUnderTest arm, const MoeLayerWeights& w, test::DeviceRun& run, bool intermediates,
               cudaStream_t stream = nullptr) {
  const int64_t P = run.inputs.n_tokens * run.inputs.k;
  const int k = run.inputs.k;
  ArmRun out;
  if (arm == ArmUnderTest::kFusedWmma) {
    wmma::WmmaLayerWorkspace ws;
    ws.keep_intermediates = intermediates;
    auto launch = [&] {
      run.poison_y();
      wmma::run_layer_wmma(w, run.inputs.x, run.inputs.ids, run.inputs.weights, run.inputs.n_tokens, k, ws, stream,
                           run.y.get());
      STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    launch();  // sizes the workspace
    if (intermediates) {
      for (float* rows : {ws.gate.get(), ws.up.get(), ws.h.get()}) test::poison_device(rows, P * w.f);
      test::poison_device(ws.down.get(), P * w.d);
    }
    launch();
    out.y = run.y_host();
    if (intermediates) {
      const auto& g = ws.tables;
      out.gate = test::unsorted_rows(ws.gate.get(), g.pair_token, g.pair_slot, P, k, w.f);
      out.up = test::unsorted_rows(ws.up.get(), g.pair_token, g.pair_slot, P, k, w.f);
      out.h = test::unsorted_rows(ws.h.get(), g.pair_token, g.pair_slot, P, k, w.f);
      out.down = test::unsorted_rows(ws.down.get(), g.pair_token, g.pair_slot, P, k, w.d);
    }
    return out;
  }
  const Arm request = arm == ArmUnderTest::kProduction ? Arm::kProduction
                      : arm == ArmUnderTest::kFusedSm80 ? Arm::kFusedSm80
                                                        : Arm::kFusedHopper;
  cuda::Workspace ws;
  ws.keep_h = intermediates;
  run.run(w, request, ws, stream);  // sizes the workspace
  if (intermediates) {
    test::poison_gate_up_h(ws.last(), w.f);
    test::poison_device(const_cast<float*>(ws.last().down), P * w.d);
  }
  out.y = run.run(w, request, ws, stream);
  // The arm named when it carries the layer, else the registry's fallback, which the report names.
  if (arm_carries(arm, w)) {
    EXPECT_EQ(run.last.arm, request) << run.last.fallback;
    EXPECT_EQ(run.last.fallback, "");
  } else {
    EXPECT_NE(run.last.arm, request);
    EXPECT_NE(run.last.fallback, "");
  }
  if (intermediates) {
    const cuda::WorkspaceView& v = ws.last();
    out.gate = test::unsorted_rows(v.gate, v, k, w.f);
    out.up = test::unsorted_rows(v.up, v, k, w.f);
    out.h = test::unsorted_rows(v.h, v, k, w.f);
    out.down = test::unsorted_rows(v.down, v, k, w.d);
  }
  return out;
}

class ArmMatrix : public ::testing::TestWithParam<MatrixCase> {
 protected:
  void SetUp() override {
    if (!test::have_cuda_device()) GTEST_SKIP() << "no CUDA device";
    if (GetParam().arm == ArmUnderTest::kFusedHopper && !cuda::fused_hopper::hopper_available())
      GTEST_SKIP() << "the fused-hopper arm needs an sm_90a device";
  }
};

TEST_P(ArmMatrix, CpuProductionBitsAndOracleBounds) {
  const MatrixCase& c = GetParam();
  const EdgeCase& e = c.edge;
  const CaseData& data = case_data(c.pair, e);
  SCOPED_TRACE(case_name({c, 0}) + " case seed " + std::to_string(data.seed));
  const MoeLayerWeights& w = data.device.weights;
  const LayerInputs in_host = data.inputs(e.n_tokens, e.k);
  const bool carried = arm_carries(c.arm, w);
  test::DeviceRun run(in_host, e.d);
  const int64_t P = e.n_tokens * e.k;

  if (c.arm == ArmUnderTest::kFusedWmma && !carried) {
    // Its own entry point has no production arm to fall back on: refused, naming the tensor.
    try {
      run_arm(c.arm, w, run, false);
      ADD_FAILURE() << "the fused-wmma arm ran a pair it does not carry";
    } catch (const Error& err) {
      EXPECT_EQ(err.status(), Status::kUnsupported) << err.what();
      EXPECT_NE(std::string(err.what()).find(w.gate.name), std::string::npos) << err.what();
    }
    return;
  }
  const ArmRun got = run_arm(c.arm, w, run, true);
  std::printf("%s: %s; differing elements vs the CPU production arm: y %lld gate %lld up %lld h %lld down %lld\n",
              case_name({c, 0}).c_str(), carried ? "the arm ran" : "another arm ran (fallback)",
              static_cast<long long>(test::count_bitwise_diffs(got.y.data(), data.y_cpu.data(), e.n_tokens * e.d)),
              static_cast<long long>(test::count_bitwise_diffs(got.gate.data(), data.cpu.gate.data(), P * e.f)),
              static_cast<long long>(test::count_bitwise_diffs(got.up.data(), data.cpu.up.data(), P * e.f)),
              static_cast<long long>(test::count_bitwise_diffs(got.h.data(), data.cpu.h.data(), P * e.f)),
              static_cast<long long>(test::count_bitwise_diffs(got.down.data(), data.cpu.down.data(), P * e.d)));
  EXPECT_EQ(test::count_bitwise_diffs(got.y.data(), data.y_cpu.data(), e.n_tokens * e.d), test::kMaxDifferingElements);
  EXPECT_EQ(test::count_bitwise_diffs(got.gate.data(), data.cpu.gate.data(), P * e.f), test::kMaxDifferingElements);
  EXPECT_EQ(test::count_bitwise_diffs(got.up.data(), data.cpu.up.data(), P * e.f), test::kMaxDifferingElements);
  EXPECT_EQ(test::count_bitwise_diffs(got.h.data(), data.cpu.h.data(), P * e.f), test::kMaxDifferingElements);
  EXPECT_EQ(test::count_bitwise_diffs(got.down.data(), data.cpu.down.data(), P * e.d), test::kMaxDifferingElements);
  EXPECT_EQ(test::count_nan(got.y) + test::count_nan(got.gate) + test::count_nan(got.up) + test::count_nan(got.h) +
                test::count_nan(got.down),
            0);

  const MoeLayerWeights& hw = data.layer.weights;
  const OracleOutput same = same_quant_oracle(hw, in_host, 0, data.cpu.h.data());  // fed the CPU arm's h
  test::expect_same_quant(test::compare_rows(got.gate.data(), same.gate.data(), P, e.f), Numerics::kQ8,
                          hw.gate.type, Stage::kGate);
  test::expect_same_quant(test::compare_rows(got.up.data(), same.up.data(), P, e.f), Numerics::kQ8, hw.up.type,
                          Stage::kUp);
  test::expect_same_quant(test::compare_rows(got.y.data(), same.y.data(), e.n_tokens, e.d), Numerics::kQ8,
                          hw.down.type, Stage::kY);
}

TEST_P(ArmMatrix, SameBitsOverWorkspacesStreamsAndChunkSplits) {
  const MatrixCase& c = GetParam();
  const EdgeCase& e = c.edge;
  const CaseData& data = case_data(c.pair, e);
  SCOPED_TRACE(case_name({c, 0}) + " case seed " + std::to_string(data.seed));
  const MoeLayerWeights& w = data.device.weights;
  if (c.arm == ArmUnderTest::kFusedWmma && !arm_carries(c.arm, w)) GTEST_SKIP() << "refused (checked above)";
  test::DeviceRun run(data.inputs(e.n_tokens, e.k), e.d);
  const std::vector<float> whole = run_arm(c.arm, w, run, false).y;
  cudaStream_t stream = nullptr;
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::vector<float> other_stream = run_arm(c.arm, w, run, false, stream).y;
  STRATA_CUDA_CHECK(cudaStreamDestroy(stream));
  EXPECT_EQ(test::count_bitwise_diffs(whole.data(), other_stream.data(), run.n_y), 0);
  EXPECT_EQ(test::count_bitwise_diffs(whole.data(), data.y_cpu.data(), run.n_y), 0);

  // The tokens in chunks of 1, 16 and the rest (where there are that many), each chunk a run of
  // its own on views into the same device inputs (x at a row offset), y assembled on the host.
  std::vector<int64_t> bounds = {0};
  for (int64_t step : {int64_t{1}, int64_t{16}})
    if (bounds.back() + step < e.n_tokens) bounds.push_back(bounds.back() + step);
  bounds.push_back(e.n_tokens);
  std::vector<float> split = test::poisoned(run.n_y);
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    const int64_t t0 = bounds[i], n = bounds[i + 1] - bounds[i];
    test::DeviceRun part(data.inputs(n, e.k), e.d);  // its own y of n rows; the inputs are views
    part.inputs = {run.x.get() + t0 * e.d, run.ids.get() + t0 * e.k, run.weights.get() + t0 * e.k, n, e.k};
    const std::vector<float> y_part = run_arm(c.arm, w, part, false).y;
    std::copy(y_part.begin(), y_part.end(), split.begin() + t0 * e.d);
  }
  std::printf("%s: chunks at", case_name({c, 0}).c_str());
  for (int64_t b : bounds) std::printf(" %lld", static_cast<long long>(b));
  std::printf("; differing elements vs one chunk: %lld\n",
              static_cast<long long>(test::count_bitwise_diffs(split.data(), whole.data(), run.n_y)));
  EXPECT_EQ(test::count_bitwise_diffs(split.data(), whole.data(), run.n_y), 0);
}

INSTANTIATE_TEST_SUITE_P(All, ArmMatrix, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace strata
