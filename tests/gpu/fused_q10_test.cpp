// The q10 fused arm on each of its kernel families (cuda/fused_q10: the sm_80 kernels on mma.sync
// m16n8k16 f16, the sm_90a ones on wgmma f16, and, named, the 16x16x16 f16 tile
// kernels), bitwise. Edges (IQ3_S gate/up + Q2_0 down, every kernel family):
//   - against a direct host model of the q10 rule (docs/numerics.md, "q10"; written here from
//     pipeline/arith_q10.hpp and the traits' decode_wide): y, gate, up, h, h codes and scales,
//     down;
//   - against the q10 CPU arm, run_layer_cpu(..., Numerics::kQ10): y and the debug rows;
//   - across launches and both tile configurations (a configuration changes speed, never a bit);
// on seeded edge cases (T = 1, k = 1, empty and one-row experts, an expert with most of the
// tokens, multi-tile experts, a partial feature block of the small tile, E = 1024 with k = 16,
// 2-byte aligned weights, token rows scaled from 2^-60 to 2^56)
// and an all-zero token whose output row must be exactly zero. Formats (the sm_80 kernels): every
// format of q10_formats.hpp once as gate/up (down Q8_0) and once as down (gate/up Q8_0), each at
// its smallest d and f with T = 1, k = 1, at d or f % 64 == 32 where its block allows (the row's
// short activation block) with skewed routing and empty experts, and on multi-tile experts; and
// mixed pairs at real geometries (MXFP4 at gpt-oss's d = f = 2880), and with each tensor ending
// where mapped memory ends (a read past its last byte faults: mapped_end.hpp): against the
// rule's host model, the q10 CPU arm, reruns and both tiles. HopperFormats (the sm_90a kernels):
// every format in both roles at a K that ends in a partial stage, of several whole stages and of
// 2048 with 16-byte aligned tensors and rows (the raw stages by TMA) and at a mapping's end, and
// MXFP4 at gpt-oss's 2880 x 2880, against the same two, and again with one bulk copy per weight
// row (STRATA_Q10_RAW_COPY=rows).
// Seeds are printed on failure and replay with
// STRATA_Q10_TEST_SEED=<seed>. Skips without a device; the support checks run without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "cpu/moe_cpu.hpp"
#include "cuda/backend/run_layer.hpp"
#include "cuda/fused_hopper/hopper_arm.hpp"
#include "cuda/fused_q10/q10_arm.hpp"
#include "cuda/fused_q10/hopper_q10_products.hpp"
#include "cuda/fused_q10/q10_formats.hpp"
#include "formats/registry.hpp"
#include "gpu_test_util.hpp"
#include "layer_run.hpp"
#include "mapped_end.hpp"
#include "moe_check.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/arith_q10.hpp"
#include "pipeline/numerics.hpp"
#include "synthetic_case.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

// ---- the host model of the q10 rule ------------------------------------------------------------
struct Q10Rows {
  std::vector<int16_t> codes;  // [rows, cols]
  std::vector<float> scales;   // [rows, q10_blocks_per_row(cols)]
  std::vector<int32_t> sums;   // [rows, cols/16]
};

Q10Rows quantize_rows_host(const float* x, int64_t rows, int64_t cols) {
  Q10Rows q;
  const int64_t blocks = q10_blocks_per_row(cols);
  q.codes.resize(rows * cols);
  q.scales.resize(rows * blocks);
  q.sums.resize(rows * cols / kQ10SumValues);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t first = r * cols + b * kQ10BlockValues;
      quantize_block_q10(x + first, q10_block_values(cols, b), &q.codes[first],
                         &q.scales[r * blocks + b], &q.sums[first / kQ10SumValues]);
    }
  return q;
}

// One tensor's product for one expert row against one activation row, span by span.
template <class F>
float span_product(const ExpertTensor& t, int64_t expert, int64_t row, const Q10Rows& act,
                   int64_t act_row, int64_t K) {
  float acc = 0.0f;
  const int64_t blocks = q10_blocks_per_row(K);
  for (int64_t k0 = 0; k0 < K; k0 += F::kWideSpan) {
    int16_t w[F::kWideSpan];
    WideScale ws;
    F::decode_wide(t.row(expert, row) + (k0 / F::kBlockValues) * F::kBlockBytes,
                   static_cast<int>((k0 % F::kBlockValues) / F::kWideSpan), w, ws);
    int32_t isum = 0, asum = 0;
    for (int i = 0; i < F::kWideSpan; ++i) {
      const int32_t a = act.codes[act_row * K + k0 + i];
      isum += int32_t{w[i]} * a;
      asum += a;
    }
    acc = fold_span<F>(acc, static_cast<float>(isum), static_cast<float>(asum), ws,
                       act.scales[act_row * blocks + k0 / kQ10BlockValues]);
  }
  return acc;
}

// The tensor's format picked at run time (every format the q10 kernels carry).
void products(const ExpertTensor& t, int64_t expert, const Q10Rows& act, int64_t act_row, int64_t K,
              int64_t out_rows, float* out) {
  const bool known = visit_format<cuda::fused_q10::Q10GateUpFormats>(t.type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    for (int64_t r = 0; r < out_rows; ++r) out[r] = span_product<F>(t, expert, r, act, act_row, K);
  });
  ASSERT_TRUE(known) << "no wide decode for " << ggml_type_name(t.type);
}

struct Q10Model {
  std::vector<float> gate, up, h, down;  // [(t, j), f] / [(t, j), d]
  Q10Rows h_q;                           // [(t, j), f]
  std::vector<float> y;                  // [T, d]
};

Q10Model q10_model(const MoeLayerWeights& layer, const LayerInputs& in) {
  const int64_t T = in.n_tokens, k = in.k, d = layer.d, f = layer.f, P = T * k;
  const Q10Rows x_q = quantize_rows_host(in.x, T, d);
  Q10Model m;
  m.gate.resize(P * f);
  m.up.resize(P * f);
  m.h.resize(P * f);
  m.down.resize(P * d);
  m.y.resize(T * d);
  for (int64_t p = 0; p < P; ++p) {
    const int64_t e = in.ids[p], t = p / k;
    products(layer.gate, e, x_q, t, d, f, &m.gate[p * f]);
    products(layer.up, e, x_q, t, d, f, &m.up[p * f]);
    for (int64_t i = 0; i < f; ++i) m.h[p * f + i] = swiglu(m.gate[p * f + i], m.up[p * f + i]);
  }
  m.h_q = quantize_rows_host(m.h.data(), P, f);
  for (int64_t p = 0; p < P; ++p)
    products(layer.down, in.ids[p], m.h_q, p, f, d, &m.down[p * d]);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < d; ++c) {
      float acc = 0.0f;
      for (int64_t j = 0; j < k; ++j)
        acc = combine_step(acc, in.weights[t * k + j], m.down[(t * k + j) * d + c]);
      m.y[t * d + c] = acc;
    }
  return m;
}

// ---- the q10 CPU arm ----------------------------------------------------------------------------
template <class Layer>
void run_cpu_q10(const Layer& layer, const LayerInputs& in, float* y, CpuDebugOutputs* debug) {
  run_layer_cpu(layer, in, Arm::kProduction, 2, y, debug, Numerics::kQ10);
}

// ---- device runs --------------------------------------------------------------------------------
using test::unsorted_rows;  // sorted-pair rows back in (token, slot) order, through a workspace view

// The kernel family of the runs in a scope (Q10EngineScope, WmmaScope below): "1" takes the sm_90a
// kernels where the device and build have them, "0" the sm_80 ones; wmma the 16x16x16 f16 ones.
std::string g_engine = "1";
bool g_wmma = false;

cuda::fused_q10::Q10Kernels kernels_for(const MoeLayerWeights& layer) {
  using cuda::fused_q10::Q10Kernels;
  // A layer the 16x16x16 kernels do not carry runs the others (the registry's fallback).
  if (g_wmma && cuda::fused_q10::q10_wmma_supports(layer)) return Q10Kernels::kWmma;
  return g_engine == "1" && cuda::fused_q10::use_q10_hopper(layer) ? Q10Kernels::kHopper : Q10Kernels::kSm80;
}

// The arm the registry calls that family.
Arm arm_of(cuda::fused_q10::Q10Kernels kernels) {
  using cuda::fused_q10::Q10Kernels;
  return kernels == Q10Kernels::kWmma ? Arm::kFusedWmma : kernels == Q10Kernels::kHopper ? Arm::kFusedHopper
                                                                                          : Arm::kFusedSm80;
}

// The shared device inputs (test::DeviceRun) run through the q10 arm's own entry point with the
// kernel family of the scope.
struct DeviceRun : test::DeviceRun {
  using test::DeviceRun::DeviceRun;
  using test::DeviceRun::run;

  std::vector<float> run(const MoeLayerWeights& layer, cuda::fused_q10::Q10Workspace& ws) {
    poison_y();
    cuda::fused_q10::run_layer_q10(layer, inputs, ws, nullptr, y.get(), kernels_for(layer));
    STRATA_CUDA_CHECK(cudaDeviceSynchronize());
    return y_host();
  }
};

// Poisons the workspace's rows so an element the kernels fail to write shows (NaN / f16 NaN).
void poison_rows(const cuda::fused_q10::Q10WorkspaceView& v, int64_t f, int64_t d) {
  if (v.n_pairs == 0) return;
  test::poison_device(const_cast<float*>(v.gate), v.n_pairs * f);
  test::poison_device(const_cast<float*>(v.up), v.n_pairs * f);
  test::poison_device(const_cast<float*>(v.h), v.n_pairs * f);
  test::poison_device(const_cast<float*>(v.down), v.n_pairs * d);
  test::poison_device(const_cast<float*>(v.h_scales), v.n_pairs * q10_blocks_per_row(f));
  STRATA_CUDA_CHECK(
      cudaMemset(const_cast<__half*>(v.h_codes), 0xFF, v.n_pairs * f * sizeof(__half)));
  STRATA_CUDA_CHECK(
      cudaMemset(const_cast<int32_t*>(v.h_sums), 0x7F, v.n_pairs * f / 16 * sizeof(int32_t)));
}

int64_t count_code_diffs(const std::vector<__half>& got, const std::vector<int16_t>& want) {
  int64_t wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, &got[i], sizeof bits);
    wrong += bits != synth::float_to_fp16_bits(static_cast<float>(want[i]));
  }
  return wrong;
}

// ---- seeds: printed on failure, replayed with STRATA_Q10_TEST_SEED ------------------------------
uint64_t case_seed(const std::string& salt) {
  if (const char* fixed = std::getenv("STRATA_Q10_TEST_SEED"); fixed != nullptr && *fixed != '\0')
    return std::strtoull(fixed, nullptr, 10);
  return test::fresh_seed(salt);
}

std::string seed_trace(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay: STRATA_Q10_TEST_SEED=" + std::to_string(seed) +
         ")";
}

// ---- the cases ----------------------------------------------------------------------------------
struct Q10Case {
  std::string name;
  int64_t d, f, n_expert;
  int k;
  int64_t n_tokens;
  test::CaseRouting routing;
  GgmlType gate_up = GgmlType::IQ3_S;  // gate and up
  GgmlType down = GgmlType::Q2_0;
  size_t weight_offset = 2;  // the tensors' bytes past a device allocation (test::upload_layer)
  // Token rows scaled by powers of two (kExtremeScales, by token): gate and up scale with them
  // exactly, so h spans magnitudes whose requantisation scales lie below, inside and above the
  // range where the Hopper epilogue divides by the reciprocal (q10_reciprocal_applies).
  bool extreme_magnitudes = false;
};

constexpr float kExtremeScales[] = {1.0f, 0x1p-60f, 0x1p-44f, 0x1p44f, 0x1p56f};

// weight_offset of a case whose tensors each end where mapped memory ends (mapped_end.hpp): a
// read past a tensor's last byte faults.
constexpr size_t kAtMappingEnd = SIZE_MAX;

// The device copy of a case's weights, as its weight_offset says.
struct CaseWeights {
  CaseWeights(const MoeLayerWeights& host, size_t offset) {
    if (offset == kAtMappingEnd) {
      mapped.emplace(test::upload_layer_at_mapping_end(host));
      weights = mapped->weights;
    } else {
      plain.emplace(test::upload_layer(host, offset));
      weights = plain->weights;
    }
  }
  std::optional<test::DeviceLayerCopy> plain;
  std::optional<test::MappedEndLayer> mapped;
  MoeLayerWeights weights;  // data pointers are device addresses
};

// The case's layer (synth::make_layer: seed s), routing (s + 1) and activations (s + 2).
test::SyntheticCase make_case(const Q10Case& c, uint64_t seed) {
  synth::LayerSpec spec;
  spec.d = c.d;
  spec.f = c.f;
  spec.n_expert = c.n_expert;
  spec.gate_type = spec.up_type = c.gate_up;
  spec.down_type = c.down;
  test::SyntheticCase sc = test::make_synthetic_case(spec, c.k, c.n_tokens, c.routing, seed);
  if (c.extreme_magnitudes)
    for (int64_t t = 0; t < c.n_tokens; ++t)
      for (int64_t i = 0; i < c.d; ++i) sc.x[t * c.d + i] *= kExtremeScales[t % std::size(kExtremeScales)];
  return sc;
}

std::string case_name(const ::testing::TestParamInfo<Q10Case>& info) {
  return info.param.name;
}

const Q10Case kCases[] = {
    {"t1_k1", 256, 128, 4, 1, 1, test::CaseRouting::kUniform},
    {"t17_skewed", 256, 128, 8, 2, 17, test::CaseRouting::kSkewed},
    {"one_row_experts", 256, 192, 64, 2, 9,
     test::CaseRouting::kUniform},  // most experts empty or one row
    {"single_expert_many_rows", 512, 128, 4, 1, 150,
     test::CaseRouting::kSingleExpert},  // multi-tile
    {"skewed_multi_tile", 512, 256, 8, 4, 120, test::CaseRouting::kSkewed},
    {"partial_small_feature_block", 256, 320, 6, 3, 40,
     test::CaseRouting::kUniform},  // f % 128 == 64
    {"qwen35_a3b_t24", 2048, 512, 256, 8, 24, test::CaseRouting::kSkewed},
    {"e1024_k16", 256, 128, 1024, 16, 40, test::CaseRouting::kUniform},  // 640 pairs over 1024 experts
    {"single_expert_600_rows", 512, 128, 2, 1, 600,
     test::CaseRouting::kSingleExpert},  // four full 128-pair tiles and a partial one
    // A full 128-pair tile, then 64 pairs (at most one consumer's rows of the large tile) or 65.
    {"single_expert_192_rows", 512, 192, 2, 1, 192, test::CaseRouting::kSingleExpert},
    {"single_expert_193_rows", 256, 128, 2, 1, 193, test::CaseRouting::kSingleExpert},
    // A mean of 128 pairs per expert: the Hopper gate/up kernel on the 128-pair tile, Q2_0 down on
    // the 64-pair one (its own tile offsets).
    {"down_tile_of_its_own", 512, 256, 4, 2, 256, test::CaseRouting::kUniform},
    // Rows of h whose scales fall outside the reciprocal's range and inside it, in one warp.
    {"extreme_magnitudes", 512, 256, 8, 2, 150, test::CaseRouting::kSkewed, GgmlType::IQ3_S,
     GgmlType::Q2_0, 2, true},
};

class FusedQ10Layer : public ::testing::TestWithParam<Q10Case> {};

// The engine of one scope ("0": the sm_80 kernels; "1": the sm_90a ones where the device and build
// have them), restored after.
struct Q10EngineScope {
  explicit Q10EngineScope(const char* value) : saved(g_engine) { g_engine = value; }
  ~Q10EngineScope() { g_engine = saved; }
  std::string saved;
};

// The q10 arm's 16x16x16 f16 tile kernels for one scope (whatever the engine says).
struct WmmaScope {
  WmmaScope() { g_wmma = true; }
  ~WmmaScope() { g_wmma = false; }
};

void check_against_the_rule(const Q10Case& c, const char* engine) {
  const Q10EngineScope scope(engine);
  const uint64_t seed = case_seed("fused_q10/" + c.name);
  SCOPED_TRACE(seed_trace(seed));
  test::SyntheticCase sc = make_case(c, seed);
  std::fill_n(sc.x.begin(), c.d,
              0.0f);  // token 0: all zeros, so its output row must be exactly zero
  const LayerInputs in = sc.inputs();
  const MoeLayerWeights& host = sc.layer.weights;
  ASSERT_TRUE(cuda::fused_q10::q10_fused_supports(host));
  const Q10Model want = q10_model(host, in);
  if (c.extreme_magnitudes) {  // the case reaches every side of the reciprocal's range
    int64_t below = 0, inside = 0, above = 0;
    for (const float s : want.h_q.scales) {
      if (s == 0.0f) continue;
      below += s < kQ10ReciprocalMin;
      inside += q10_reciprocal_applies(s);
      above += s > kQ10ReciprocalMax;
    }
    EXPECT_GT(below, 0);
    EXPECT_GT(inside, 0);
    EXPECT_GT(above, 0);
  }

  const CaseWeights dev(host, c.weight_offset);
  DeviceRun run(in, c.d);
  cuda::fused_q10::Q10Workspace ws;
  ws.keep_h = true;
  (void)run.run(dev.weights, ws);  // sizes the workspace; the checked run below starts poisoned
  poison_rows(ws.last(), c.f, c.d);
  const std::vector<float> y = run.run(dev.weights, ws);
  const auto& v = ws.last();
  const int64_t P = c.n_tokens * c.k;
  ASSERT_EQ(v.n_pairs, P);

  EXPECT_EQ(test::count_bitwise_diffs(y.data(), want.y.data(), run.n_y), 0) << "y of " << run.n_y;
  EXPECT_EQ(test::count_bitwise_diffs(unsorted_rows(v.gate, v, c.k, c.f).data(), want.gate.data(),
                                      P * c.f),
            0)
      << "gate";
  EXPECT_EQ(
      test::count_bitwise_diffs(unsorted_rows(v.up, v, c.k, c.f).data(), want.up.data(), P * c.f),
      0)
      << "up";
  EXPECT_EQ(
      test::count_bitwise_diffs(unsorted_rows(v.h, v, c.k, c.f).data(), want.h.data(), P * c.f), 0)
      << "h";
  EXPECT_EQ(count_code_diffs(unsorted_rows(v.h_codes, v, c.k, c.f), want.h_q.codes), 0)
      << "h codes";
  const int64_t h_blocks = q10_blocks_per_row(c.f);
  EXPECT_EQ(test::count_bitwise_diffs(unsorted_rows(v.h_scales, v, c.k, h_blocks).data(),
                                      want.h_q.scales.data(), P * h_blocks),
            0)
      << "h scales";
  const auto h_sums = unsorted_rows(v.h_sums, v, c.k, c.f / kQ10SumValues);
  EXPECT_TRUE(h_sums == want.h_q.sums) << "h code sums";
  EXPECT_EQ(test::count_bitwise_diffs(unsorted_rows(v.down, v, c.k, c.d).data(), want.down.data(),
                                      P * c.d),
            0)
      << "down";
  int64_t nonzero_zero_token = 0;
  for (int64_t i = 0; i < c.d; ++i) nonzero_zero_token += std::memcmp(&y[i], "\0\0\0\0", 4) != 0;
  EXPECT_EQ(nonzero_zero_token, 0) << "the all-zero token's row is exactly +0";

  // Through run_layer's profile switch: the same arm, the same bits.
  {
    cuda::Workspace layer_ws;
    test::poison_device(run.y.get(), run.n_y);
    const Arm arm = arm_of(kernels_for(dev.weights));
    const RunReport ran =
        cuda::run_layer(dev.weights, run.inputs, arm, layer_ws, nullptr, run.y.get(), nullptr, Numerics::kQ10);
    STRATA_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(ran.arm, arm) << "the registry runs the arm named: " << ran.fallback;
    EXPECT_EQ(ran.numerics, Numerics::kQ10);
    EXPECT_EQ(
        test::count_bitwise_diffs(test::to_host(run.y.get(), run.n_y).data(), y.data(), run.n_y), 0)
        << "run_layer(..., Numerics::kQ10)";
    ASSERT_NE(layer_ws.last_q10(), nullptr);
    EXPECT_EQ(layer_ws.last_q10()->n_pairs, P);
  }
  // Launch after launch, both tile configurations forced and, for the sm_80 kernels, the many-pair
  // tile with its raw blocks read from global memory where it would stage them: the same bits.
  EXPECT_EQ(test::count_bitwise_diffs(run.run(dev.weights, ws).data(), y.data(), run.n_y), 0)
      << "rerun";
  struct Forced {
    const char* tile;
    const char* sm80_raw;
  };
  for (const Forced forced : {Forced{"small", nullptr}, Forced{"large", nullptr}, Forced{"large", "direct"}}) {
    if (forced.sm80_raw != nullptr && std::string(engine) != "0") continue;
    const test::ScopedEnv tile("STRATA_PF_FUSED_TILE", forced.tile);
    const test::ScopedEnv raw("STRATA_Q10_SM80_RAW", forced.sm80_raw);
    cuda::fused_q10::Q10Workspace fresh;
    const std::vector<float> y_tile = run.run(dev.weights, fresh);
    EXPECT_EQ(test::count_bitwise_diffs(y_tile.data(), y.data(), run.n_y), 0)
        << "tile " << forced.tile << (forced.sm80_raw != nullptr ? ", raw blocks direct" : "");
  }
}

TEST_P(FusedQ10Layer, BitwiseEqualToTheQ10RuleAndDeterministic) {
  STRATA_REQUIRE_GPU();
  check_against_the_rule(GetParam(), "0");  // the sm_80 kernels (mma.sync m16n8k16 f16)
}

TEST_P(FusedQ10Layer, HopperKernelsBitwiseEqualToTheQ10RuleAndDeterministic) {
  STRATA_REQUIRE_GPU();
  if (!cuda::fused_hopper::hopper_available()) GTEST_SKIP() << "no sm_90a kernels on this device";
  const Q10Case& c = GetParam();
  {
    const test::SyntheticCase sc = make_case(c, 1);
    ASSERT_TRUE(cuda::fused_q10::q10_hopper_supports(sc.layer.weights));
  }
  check_against_the_rule(c, "1");  // bulk copies + wgmma f16
}

void check_against_the_cpu_arm(const Q10Case& c) {
  const uint64_t seed = case_seed("fused_q10_cpu/" + c.name);
  SCOPED_TRACE(seed_trace(seed));
  const test::SyntheticCase sc = make_case(c, seed);
  const LayerInputs in = sc.inputs();
  std::vector<float> y_cpu = test::poisoned(c.n_tokens * c.d);
  CpuDebugOutputs debug;
  run_cpu_q10(sc.layer.weights, in, y_cpu.data(), &debug);
  const CaseWeights dev(sc.layer.weights, c.weight_offset);
  DeviceRun run(in, c.d);
  cuda::fused_q10::Q10Workspace ws;
  ws.keep_h = true;
  (void)run.run(dev.weights, ws);  // sizes the workspace; the checked run below starts poisoned
  poison_rows(ws.last(), c.f, c.d);
  const std::vector<float> y = run.run(dev.weights, ws);
  const auto& v = ws.last();
  const int64_t P = c.n_tokens * c.k;
  EXPECT_EQ(test::count_bitwise_diffs(y.data(), y_cpu.data(), run.n_y), 0) << "y of " << run.n_y;
  // The debug rows where the CPU arm fills them ((t, j) pair order).
  if (debug.h.size() == static_cast<size_t>(P * c.f)) {
    EXPECT_EQ(
        test::count_bitwise_diffs(unsorted_rows(v.h, v, c.k, c.f).data(), debug.h.data(), P * c.f),
        0)
        << "h";
    // The down stage's activations: the CPU arm's h requantised by the rule.
    const Q10Rows h_q = quantize_rows_host(debug.h.data(), P, c.f);
    EXPECT_EQ(count_code_diffs(unsorted_rows(v.h_codes, v, c.k, c.f), h_q.codes), 0) << "h codes";
    const int64_t h_blocks = q10_blocks_per_row(c.f);
    EXPECT_EQ(test::count_bitwise_diffs(unsorted_rows(v.h_scales, v, c.k, h_blocks).data(),
                                        h_q.scales.data(), P * h_blocks),
              0)
        << "h scales";
    EXPECT_TRUE(unsorted_rows(v.h_sums, v, c.k, c.f / kQ10SumValues) == h_q.sums)
        << "h code sums";
  }
  if (debug.down.size() == static_cast<size_t>(P * c.d)) {
    EXPECT_EQ(test::count_bitwise_diffs(unsorted_rows(v.down, v, c.k, c.d).data(),
                                        debug.down.data(), P * c.d),
              0)
        << "down";
  }
}

TEST_P(FusedQ10Layer, BitwiseEqualToTheQ10CpuArm) {
  STRATA_REQUIRE_GPU();
  check_against_the_cpu_arm(GetParam());
}

// The 16x16x16 f16 tile kernels (wmma_q10_kernel.cuh), selected by STRATA_PF_FUSED_WMMA=1: the
// rule's every intermediate, the q10 CPU arm's y and debug rows, reruns.
TEST_P(FusedQ10Layer, WmmaKernelsBitwiseEqualToTheRuleAndTheCpuArm) {
  STRATA_REQUIRE_GPU();
  const WmmaScope wmma;
  check_against_the_rule(GetParam(), "0");
  check_against_the_cpu_arm(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Edges, FusedQ10Layer, ::testing::ValuesIn(kCases), case_name);

// ---- every format, as gate/up and as down (the sm_80 kernels) --------------------------------
struct FormatFacts {
  GgmlType type;
  std::string name;
  int block;  // values per block
};

template <class... F>
std::vector<FormatFacts> format_facts(FormatList<F...>) {
  return {FormatFacts{F::kType, F::kName, F::kBlockValues}...};
}

std::vector<FormatFacts> carried_formats() {
  return format_facts(cuda::fused_q10::Q10GateUpFormats{});
}

// The smallest legal width of a row of blocks of `block` values (a multiple of 32 too), the width
// ending in the short 32-value activation block (32 * odd, where the block allows it), and a
// width of several 64-value stages.
int64_t width_min(int block) { return std::max(block, 32); }
int64_t width_odd(int block) { return block == 32 ? 160 : 2 * block; }
int64_t width_multi(int block) { return std::max<int64_t>(block, 64) * (block >= 128 ? 2 : 5); }

// The fixed partner: Q8_0 (32-value blocks, so the other dimension can be any multiple of 32).
constexpr GgmlType kPartner = GgmlType::Q8_0;

std::vector<Q10Case> format_cases() {
  using test::CaseRouting;
  std::vector<Q10Case> cases;
  for (const FormatFacts& fmt : carried_formats()) {
    const int b = fmt.block;
    // As gate/up (d is the gate/up rows' width), down Q8_0.
    cases.push_back({"gate_up_" + fmt.name + "_min_t1_k1", width_min(b), 32, 4, 1, 1,
                     CaseRouting::kUniform, fmt.type, kPartner});
    cases.push_back({"gate_up_" + fmt.name + "_odd_skewed", width_odd(b), 96, 8, 2, 40,
                     CaseRouting::kSkewed, fmt.type, kPartner});
    cases.push_back({"gate_up_" + fmt.name + "_multi_tile", width_multi(b), 320, 6, 2, 150,
                     CaseRouting::kSingleExpert, fmt.type, kPartner});
    // As down (f is the down rows' width), gate/up Q8_0.
    cases.push_back({"down_" + fmt.name + "_min_t1_k1", 32, width_min(b), 4, 1, 1,
                     CaseRouting::kUniform, kPartner, fmt.type});
    cases.push_back({"down_" + fmt.name + "_odd_skewed", 96, width_odd(b), 8, 2, 40,
                     CaseRouting::kSkewed, kPartner, fmt.type});
    cases.push_back({"down_" + fmt.name + "_multi_tile", 320, width_multi(b), 6, 2, 150,
                     CaseRouting::kSingleExpert, kPartner, fmt.type});
    // Each tensor's last byte the last mapped one: a decode that reads past a block faults.
    cases.push_back({"gate_up_" + fmt.name + "_at_mapping_end", width_odd(b), 96, 8, 2, 40,
                     CaseRouting::kSkewed, fmt.type, kPartner, kAtMappingEnd});
    cases.push_back({"down_" + fmt.name + "_at_mapping_end", 96, width_odd(b), 8, 2, 40,
                     CaseRouting::kSkewed, kPartner, fmt.type, kAtMappingEnd});
  }
  // Mixed pairs at real geometries (gpt-oss: d = f = 2880 = 45 * 64, MXFP4).
  cases.push_back({"q4_K_q6_K", 512, 768, 16, 4, 33, CaseRouting::kSkewed, GgmlType::Q4_K,
                   GgmlType::Q6_K});
  cases.push_back({"iq4_xs_iq4_nl", 768, 352, 16, 4, 33, CaseRouting::kSkewed, GgmlType::IQ4_XS,
                   GgmlType::IQ4_NL});
  cases.push_back({"q8_0_q8_0", 416, 224, 8, 2, 70, CaseRouting::kUniform, GgmlType::Q8_0,
                   GgmlType::Q8_0});
  cases.push_back({"iq2_xxs_iq4_nl", 512, 288, 12, 3, 25, CaseRouting::kSkewed, GgmlType::IQ2_XXS,
                   GgmlType::IQ4_NL});
  cases.push_back({"mxfp4_mxfp4_gpt_oss", 2880, 2880, 8, 4, 9, CaseRouting::kSkewed,
                   GgmlType::MXFP4, GgmlType::MXFP4});
  cases.push_back({"q4_1_q5_1_odd", 224, 160, 8, 2, 41, CaseRouting::kSkewed, GgmlType::Q4_1,
                   GgmlType::Q5_1});
  cases.push_back({"q2_K_q5_K", 256, 512, 8, 2, 50, CaseRouting::kSkewed, GgmlType::Q2_K,
                   GgmlType::Q5_K});
  return cases;
}

class FusedQ10Format : public ::testing::TestWithParam<Q10Case> {};

// The sm_80 kernels (engine "0", also for the layers the Hopper kernels carry):
// the rule's every intermediate, the q10 CPU arm, reruns and both tiles.
TEST_P(FusedQ10Format, Sm80KernelsBitwiseEqualToTheRuleAndTheCpuArm) {
  STRATA_REQUIRE_GPU();
  const Q10Case& c = GetParam();
  {
    const test::SyntheticCase sc = make_case(c, 1);
    ASSERT_TRUE(cuda::fused_q10::q10_fused_supports(sc.layer.weights))
        << cuda::fused_q10::q10_fused_refusal(sc.layer.weights);
  }
  check_against_the_rule(c, "0");
  const Q10EngineScope scope("0");
  check_against_the_cpu_arm(c);
}

// Left to the arm's own choice on an sm_90 device: a layer the Hopper kernels do not carry runs
// the sm_80 kernels there, with the same bits.
TEST_P(FusedQ10Format, DefaultSelectionOnHopperGivesTheSameBits) {
  STRATA_REQUIRE_GPU();
  if (!cuda::fused_hopper::hopper_available()) GTEST_SKIP() << "no sm_90a kernels on this device";
  check_against_the_rule(GetParam(), "1");
}

INSTANTIATE_TEST_SUITE_P(Formats, FusedQ10Format, ::testing::ValuesIn(format_cases()), case_name);

// ---- every format on the sm_90a kernels ------------------------------------------------------
// Geometry they carry: d and f multiples of 64 (and of the block). Per format and role, a "small"
// case whose K is no multiple of the stage where the block allows it (a partial last stage:
// K = 320 for blocks of 32 or 64, 384 for 128; K = 256 for 256-value blocks), and a "long" case
// of several whole stages with a multi-tile expert; the partner is Q8_0. Both tiles run (the
// fixture forces each).
int64_t hopper_width_small(int block) { return block <= 64 ? 320 : block == 128 ? 384 : 256; }

std::vector<Q10Case> hopper_format_cases() {
  using test::CaseRouting;
  std::vector<Q10Case> cases;
  for (const FormatFacts& fmt : carried_formats()) {
    const int64_t small = hopper_width_small(fmt.block);
    cases.push_back({"gate_up_" + fmt.name + "_small", small, 128, 8, 2, 17, CaseRouting::kSkewed,
                     fmt.type, kPartner});
    cases.push_back({"gate_up_" + fmt.name + "_long", 768, 192, 4, 2, 150,
                     CaseRouting::kSingleExpert, fmt.type, kPartner});
    cases.push_back({"down_" + fmt.name + "_small", 256, small, 8, 2, 17, CaseRouting::kSkewed,
                     kPartner, fmt.type});
    cases.push_back({"down_" + fmt.name + "_long", 192, 768, 4, 2, 150,
                     CaseRouting::kSingleExpert, kPartner, fmt.type});
    // K = 2048 (rows of whole 16-byte units in every format) with 16-byte-aligned tensors, as
    // a GGUF file has them: every raw stage starts on the same 16-byte phase.
    cases.push_back({"gate_up_" + fmt.name + "_aligned", 2048, 128, 8, 2, 17,
                     CaseRouting::kSkewed, fmt.type, kPartner, 0});
    cases.push_back({"down_" + fmt.name + "_aligned", 128, 2048, 8, 2, 17,
                     CaseRouting::kSkewed, kPartner, fmt.type, 0});
    cases.push_back({"gate_up_" + fmt.name + "_at_mapping_end", small, 128, 8, 2, 17,
                     CaseRouting::kSkewed, fmt.type, kPartner, kAtMappingEnd});
    cases.push_back({"down_" + fmt.name + "_at_mapping_end", 256, small, 8, 2, 17,
                     CaseRouting::kSkewed, kPartner, fmt.type, kAtMappingEnd});
    // The small K with 16-byte-aligned tensors: the raw stages by TMA whatever the row bytes (in
    // groups of 16-byte phases), the last stage partial.
    cases.push_back({"gate_up_" + fmt.name + "_small_aligned", small, 128, 8, 2, 17,
                     CaseRouting::kSkewed, fmt.type, kPartner, 0});
    cases.push_back({"down_" + fmt.name + "_small_aligned", 256, small, 8, 2, 17,
                     CaseRouting::kSkewed, kPartner, fmt.type, 0});
    // Rows whose activation stages all fit in the ring: the items of a unit share one copy of
    // them (HopperQ10Walk). Down with K = 384 (256 for 256-value blocks) and d = 1792: 7 column
    // blocks of 256, 14 of 128, so units of 4 and 3, or 4 and 2; gate/up with K = 512 (256) and
    // f = 1024: 8 or 16 column blocks.
    const int64_t shared_down = fmt.block == 256 ? 256 : 384, shared_gate_up = fmt.block == 256 ? 256 : 512;
    cases.push_back({"down_" + fmt.name + "_shared_codes", 1792, shared_down, 8, 2, 150,
                     CaseRouting::kSkewed, kPartner, fmt.type, 0});
    cases.push_back({"gate_up_" + fmt.name + "_shared_codes", shared_gate_up, 1024, 8, 2, 150,
                     CaseRouting::kSkewed, fmt.type, kPartner, 0});
    // Down with K = 512 (qwen35-a3b's f): the 128-pair tile's activation ring holds the whole row
    // where the format's raw stages leave room for it (hopper_q10_config), else the stages go round.
    cases.push_back({"down_" + fmt.name + "_shared_codes_512", 1792, 512, 8, 2, 150,
                     CaseRouting::kSkewed, kPartner, fmt.type, 0});
  }
  // gpt-oss's d = f = 2880 in MXFP4 (1530-byte rows): eleven gate/up stages of 256 values and one
  // of 64, twenty-two down stages of 128 and one of 64.
  cases.push_back({"mxfp4_gpt_oss", 2880, 2880, 8, 2, 40, CaseRouting::kSkewed, GgmlType::MXFP4,
                   GgmlType::MXFP4, 0});
  return cases;
}

class FusedQ10HopperFormat : public ::testing::TestWithParam<Q10Case> {};

TEST_P(FusedQ10HopperFormat, HopperKernelsBitwiseEqualToTheRuleAndTheCpuArm) {
  STRATA_REQUIRE_GPU();
  if (!cuda::fused_hopper::hopper_available()) GTEST_SKIP() << "no sm_90a kernels on this device";
  const Q10Case& c = GetParam();
  {
    const test::SyntheticCase sc = make_case(c, 1);
    ASSERT_TRUE(cuda::fused_q10::q10_hopper_supports(sc.layer.weights)) << c.name;
  }
  check_against_the_rule(c, "1");
  {  // the same layer with one bulk copy per weight row where TMA boxes would move the stages
    const test::ScopedEnv rows("STRATA_Q10_RAW_COPY", "rows");
    check_against_the_rule(c, "1");
  }
  {  // units of 3 column blocks (the last of a tile shorter), and every item on its own
    const test::ScopedEnv three("STRATA_Q10_ACT_GROUP", "3");
    check_against_the_rule(c, "1");
    const test::ScopedEnv one("STRATA_Q10_ACT_GROUP", "1");
    check_against_the_rule(c, "1");
  }
  if (c.name.find("_shared_codes") != std::string::npos) {  // the same units on the 128-pair tile
    const test::ScopedEnv large("STRATA_PF_FUSED_TILE", "large");
    check_against_the_rule(c, "1");
    const test::ScopedEnv three("STRATA_Q10_ACT_GROUP", "3");
    check_against_the_rule(c, "1");
  }
  const Q10EngineScope scope("1");
  check_against_the_cpu_arm(c);
}

// The column blocks per unit come from STRATA_Q10_ACT_GROUP where it is set: an integer from 1 to
// 64, any other value refused with the variable's name.
TEST(FusedQ10Arm, ActGroupSwitchTakesOnlyWholeNumbersInItsRange) {
  {
    const test::ScopedEnv unset("STRATA_Q10_ACT_GROUP", "");
    EXPECT_EQ(cuda::fused_q10::hopper_q10_act_group(), cuda::fused_q10::kHopperQ10ActGroup);
  }
  for (const char* good : {"1", "7", "64"}) {
    const test::ScopedEnv set("STRATA_Q10_ACT_GROUP", good);
    EXPECT_EQ(cuda::fused_q10::hopper_q10_act_group(), std::stoi(good)) << good;
  }
  for (const char* bad : {"0", "65", "-1", "4x", "x", " 4", "4.0"}) {
    const test::ScopedEnv set("STRATA_Q10_ACT_GROUP", bad);
    try {
      (void)cuda::fused_q10::hopper_q10_act_group();
      ADD_FAILURE() << "accepted STRATA_Q10_ACT_GROUP='" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("STRATA_Q10_ACT_GROUP"), std::string::npos) << e.what();
    }
  }
}

// The launches that one run of case c (seeded by seed_prefix + its name) adds to a process counter
// of the q10 launchers (hopper_q10_raw_tma_launches, q10_staged_launches).
uint64_t launches_counted(const Q10Case& c, const std::string& seed_prefix, uint64_t (*counter)()) {
  const test::SyntheticCase sc = make_case(c, case_seed(seed_prefix + c.name));
  const LayerInputs in = sc.inputs();
  const test::DeviceLayerCopy dev = test::upload_layer(sc.layer.weights, c.weight_offset);
  DeviceRun run(in, c.d);
  cuda::fused_q10::Q10Workspace ws;
  const uint64_t before = counter();
  (void)run.run(dev.weights, ws);
  return counter() - before;
}

// The raw stages go by TMA where the tensors are 16-byte aligned: rows of whole 16-byte units
// (K = 2048 of IQ3_S gate/up: 880 bytes; K = 512 of Q2_0 down: 144 bytes) on both tiles, and rows
// that are not, in groups of 16-byte phases (K = 768 of IQ3_S: 330 bytes, 8 rows a group; K = 128
// of Q8_0: 136 bytes, 2; K = 256 of Q2_0: 72 bytes, 2); not where the tensors sit 2 bytes past an
// allocation or the switch asks for row copies.
TEST(FusedQ10Arm, HopperRawStagesGoByTmaWhereTheLayoutAllows) {
  STRATA_REQUIRE_GPU();
  if (!cuda::fused_hopper::hopper_available()) GTEST_SKIP() << "no sm_90a kernels on this device";
  const Q10EngineScope scope("1");
  auto launches_of = [](const Q10Case& c) {
    return launches_counted(c, "fused_q10_tma/", cuda::fused_q10::hopper_q10_raw_tma_launches);
  };
  Q10Case aligned{"iq3_s_q2_0_tma", 2048, 512, 8, 2, 17, test::CaseRouting::kSkewed,
                  GgmlType::IQ3_S, GgmlType::Q2_0, 0};
  const Q10Case rows_330{"iq3_s_q8_0_rows", 768, 128, 8, 2, 17, test::CaseRouting::kSkewed,
                         GgmlType::IQ3_S, kPartner, 0};
  for (const char* tile : {"large", "small"}) {
    const test::ScopedEnv forced("STRATA_PF_FUSED_TILE", tile);
    EXPECT_EQ(launches_of(aligned), 2u) << "gate/up (880-byte rows) and down (144-byte rows), tile " << tile;
  }
  EXPECT_EQ(launches_of(rows_330), 2u) << "gate/up rows of 330 bytes, down rows of 136";
  const Q10Case down_rows_72{"iq3_s_q2_0_down_rows", 2048, 256, 8, 2, 17, test::CaseRouting::kSkewed,
                             GgmlType::IQ3_S, GgmlType::Q2_0, 0};
  EXPECT_EQ(launches_of(down_rows_72), 2u) << "gate/up rows of 880 bytes, down rows of 72";
  {
    const test::ScopedEnv rows("STRATA_Q10_RAW_COPY", "rows");
    EXPECT_EQ(launches_of(aligned), 0u) << "STRATA_Q10_RAW_COPY=rows";
  }
  aligned.weight_offset = 2;
  EXPECT_EQ(launches_of(aligned), 0u) << "tensors 2 bytes past an allocation";
}

INSTANTIATE_TEST_SUITE_P(HopperFormats, FusedQ10HopperFormat, ::testing::ValuesIn(hopper_format_cases()),
                         case_name);

// The sm_80 kernels' many-pair tile stages gate/up's raw blocks in shared memory where the format's
// raw stage fits beside two CTAs on an SM (an sm_90 device: 228 KB): IQ3_S gate/up (not Q2_0 down),
// from tensors 2 bytes past an allocation (the units at the matrices' ends by ordinary loads) and
// 16-byte aligned; not Q8_0 (its raw stage of 272 bytes a row does not fit), nor with
// STRATA_Q10_SM80_RAW=direct.
TEST(FusedQ10Arm, Sm80RawStagesInSharedMemoryWhereTheyFit) {
  STRATA_REQUIRE_GPU();
  if (!cuda::fused_hopper::hopper_available()) GTEST_SKIP() << "the staged tile's two CTAs per SM need an sm_90 SM";
  const Q10EngineScope scope("0");
  const test::ScopedEnv forced("STRATA_PF_FUSED_TILE", "large");
  auto launches_of = [](const Q10Case& c) {
    return launches_counted(c, "fused_q10_staged/", cuda::fused_q10::q10_staged_launches);
  };
  Q10Case iq3_s{"iq3_s_q2_0_staged", 2048, 512, 8, 2, 17, test::CaseRouting::kSkewed, GgmlType::IQ3_S,
                GgmlType::Q2_0};
  EXPECT_EQ(launches_of(iq3_s), 1u) << "IQ3_S gate/up, tensors 2 bytes past an allocation";
  iq3_s.weight_offset = 0;
  EXPECT_EQ(launches_of(iq3_s), 1u) << "IQ3_S gate/up, 16-byte aligned tensors";
  const Q10Case q8_0{"q8_0_staged", 256, 256, 8, 2, 17, test::CaseRouting::kSkewed, GgmlType::Q8_0, GgmlType::Q8_0};
  EXPECT_EQ(launches_of(q8_0), 0u) << "Q8_0";
  const test::ScopedEnv direct("STRATA_Q10_SM80_RAW", "direct");
  EXPECT_EQ(launches_of(iq3_s), 0u) << "STRATA_Q10_SM80_RAW=direct";
}

// The 16x16x16 kernels asked for on a layer they do not carry: the other kernels run it,
// with the bits of the rule and the CPU arm.
TEST(FusedQ10Arm, WmmaRequestOnAFormatItDoesNotCarryRunsTheOtherKernels) {
  STRATA_REQUIRE_GPU();
  const WmmaScope wmma;
  const Q10Case c{"wmma_fallback_q4_K_q6_K", 256, 256, 8, 2, 30, test::CaseRouting::kSkewed,
                  GgmlType::Q4_K, GgmlType::Q6_K};
  {
    const test::SyntheticCase sc = make_case(c, 1);
    EXPECT_FALSE(cuda::fused_q10::q10_wmma_supports(sc.layer.weights));
  }
  check_against_the_rule(c, "0");
  check_against_the_cpu_arm(c);
}

// The host model the device runs are held to is the q10 CPU arm's rule (no device needed): y,
// gate, up, h and down, bitwise, on every format in both roles at its 32 * odd (or smallest
// multi-stage) width with skewed routing, and on the mixed pairs but the largest.
TEST(FusedQ10Arm, TheHostModelIsTheCpuArmOnEveryFormat) {
  for (const Q10Case& c : format_cases()) {
    const bool per_format = c.name.rfind("gate_up_", 0) == 0 || c.name.rfind("down_", 0) == 0;
    if (per_format ? c.name.find("_odd_") == std::string::npos : c.d * c.f > 512 * 1024) continue;
    SCOPED_TRACE(c.name);
    const uint64_t seed = case_seed("fused_q10_model/" + c.name);
    SCOPED_TRACE(seed_trace(seed));
    const test::SyntheticCase sc = make_case(c, seed);
    const LayerInputs in = sc.inputs();
    const Q10Model want = q10_model(sc.layer.weights, in);
    std::vector<float> y_cpu = test::poisoned(c.n_tokens * c.d);
    CpuDebugOutputs debug;
    run_cpu_q10(sc.layer.weights, in, y_cpu.data(), &debug);
    const int64_t P = c.n_tokens * c.k;
    EXPECT_EQ(test::count_bitwise_diffs(y_cpu.data(), want.y.data(), c.n_tokens * c.d), 0) << "y";
    ASSERT_EQ(debug.h.size(), static_cast<size_t>(P * c.f));
    ASSERT_EQ(debug.down.size(), static_cast<size_t>(P * c.d));
    EXPECT_EQ(test::count_bitwise_diffs(debug.h.data(), want.h.data(), P * c.f), 0) << "h";
    EXPECT_EQ(test::count_bitwise_diffs(debug.down.data(), want.down.data(), P * c.d), 0)
        << "down";
    if (debug.gate.size() == static_cast<size_t>(P * c.f)) {
      EXPECT_EQ(test::count_bitwise_diffs(debug.gate.data(), want.gate.data(), P * c.f), 0)
          << "gate";
      EXPECT_EQ(test::count_bitwise_diffs(debug.up.data(), want.up.data(), P * c.f), 0) << "up";
    }
  }
}

// ---- what each kernel family carries (no device needed) ---------------------------------------
synth::SyntheticLayer tiny_layer(GgmlType gate_up, GgmlType up, GgmlType down, int64_t d,
                                 int64_t f) {
  synth::LayerSpec spec;
  spec.d = d;
  spec.f = f;
  spec.n_expert = 2;
  spec.gate_type = gate_up;
  spec.up_type = up;
  spec.down_type = down;
  return synth::make_layer(spec);
}

TEST(FusedQ10Arm, CarriesEveryFormatInBothRolesAtEveryLegalWidth) {
  const std::vector<FormatFacts> formats = carried_formats();
  ASSERT_EQ(formats.size(), 25u);
  for (const FormatFacts& fmt : formats) {
    SCOPED_TRACE(fmt.name);
    for (const int64_t width : {width_min(fmt.block), width_odd(fmt.block)}) {
      const auto as_gate_up = tiny_layer(fmt.type, fmt.type, kPartner, width, 32);
      EXPECT_TRUE(cuda::fused_q10::q10_fused_supports(as_gate_up.weights)) << "gate/up, d " << width;
      const auto as_down = tiny_layer(kPartner, kPartner, fmt.type, 32, width);
      EXPECT_TRUE(cuda::fused_q10::q10_fused_supports(as_down.weights)) << "down, f " << width;
      // The Hopper kernels need d and f multiples of 64 (here f or d is 32); the wmma kernels
      // carry IQ3_S gate/up + Q2_0 down only.
      EXPECT_FALSE(cuda::fused_q10::q10_hopper_supports(as_gate_up.weights));
      EXPECT_FALSE(cuda::fused_q10::q10_hopper_supports(as_down.weights));
      EXPECT_FALSE(cuda::fused_q10::q10_wmma_supports(as_gate_up.weights));
      EXPECT_FALSE(cuda::fused_q10::q10_wmma_supports(as_down.weights));
    }
  }
  const auto iq3_q2 = tiny_layer(GgmlType::IQ3_S, GgmlType::IQ3_S, GgmlType::Q2_0, 256, 128);
  EXPECT_TRUE(cuda::fused_q10::q10_hopper_supports(iq3_q2.weights));
  EXPECT_TRUE(cuda::fused_q10::q10_wmma_supports(iq3_q2.weights));
  // gpt-oss: d = f = 2880 (45 * 64, not a multiple of 256) with MXFP4.
  const auto gpt_oss = tiny_layer(GgmlType::MXFP4, GgmlType::MXFP4, GgmlType::MXFP4, 2880, 2880);
  EXPECT_TRUE(cuda::fused_q10::q10_fused_supports(gpt_oss.weights));
  EXPECT_TRUE(cuda::fused_q10::q10_hopper_supports(gpt_oss.weights));
  for (const FormatFacts& fmt : formats) {  // the Hopper geometry of every format, both roles
    SCOPED_TRACE(fmt.name);
    const int64_t w = hopper_width_small(fmt.block);
    EXPECT_TRUE(cuda::fused_q10::q10_hopper_supports(tiny_layer(fmt.type, fmt.type, kPartner, w, 64).weights));
    EXPECT_TRUE(cuda::fused_q10::q10_hopper_supports(tiny_layer(kPartner, kPartner, fmt.type, 64, w).weights));
  }
}

// The Hopper tile by the mean pairs per expert (no device needed): the 128-pair tile from 64
// (flash-next at T = 4096, a mean of 80, measured 0.72x the 64-pair tile's time), the 64-pair one
// below (qwen35-a3b at T = 512, a mean of 16).
TEST(FusedQ10Arm, HopperTileFollowsTheMeanPairsPerExpert) {
  const test::ScopedEnv unforced("STRATA_PF_FUSED_TILE", nullptr);
  EXPECT_EQ(cuda::fused_q10::hopper_q10_tile_pairs(16.0), 64);
  EXPECT_EQ(cuda::fused_q10::hopper_q10_tile_pairs(63.9), 64);
  EXPECT_EQ(cuda::fused_q10::hopper_q10_tile_pairs(64.0), 128);
  EXPECT_EQ(cuda::fused_q10::hopper_q10_tile_pairs(80.0), 128);
  EXPECT_EQ(cuda::fused_q10::hopper_q10_tile_pairs(512.0), 128);
}

// Down's own tile (no device needed): the 64-pair one where gate/up runs the 128-pair tile, the mean
// is below 192 and the down format measured faster there (Q2_0, Q4_K); gate/up's otherwise; both
// forced by STRATA_PF_FUSED_TILE. The layer case down_tile_of_its_own (E = 4, k = 2, T = 256: a
// mean of 128) runs the two tiles.
TEST(FusedQ10Arm, HopperDownTileFollowsTheMeanAndItsFormat) {
  using cuda::fused_q10::hopper_q10_down_tile_pairs;
  {
    const test::ScopedEnv unforced("STRATA_PF_FUSED_TILE", nullptr);
    EXPECT_EQ(hopper_q10_down_tile_pairs(16.0, GgmlType::Q2_0), 64);
    EXPECT_EQ(hopper_q10_down_tile_pairs(16.0, GgmlType::Q6_K), 64);
    EXPECT_EQ(hopper_q10_down_tile_pairs(64.0, GgmlType::Q2_0), 64);
    EXPECT_EQ(hopper_q10_down_tile_pairs(128.0, GgmlType::Q2_0), 64);
    EXPECT_EQ(hopper_q10_down_tile_pairs(191.9, GgmlType::Q4_K), 64);
    EXPECT_EQ(hopper_q10_down_tile_pairs(192.0, GgmlType::Q2_0), 128);
    EXPECT_EQ(hopper_q10_down_tile_pairs(512.0, GgmlType::Q2_0), 128);
    for (const GgmlType slower : {GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4,
                                  GgmlType::Q8_0, GgmlType::IQ3_S})
      EXPECT_EQ(hopper_q10_down_tile_pairs(128.0, slower), 128) << ggml_type_name(slower);
    EXPECT_EQ(cuda::fused_q10::hopper_q10_tile_pairs(128.0), 128);
  }
  for (const char* tile : {"large", "small"}) {
    const test::ScopedEnv forced("STRATA_PF_FUSED_TILE", tile);
    EXPECT_EQ(hopper_q10_down_tile_pairs(128.0, GgmlType::Q2_0), cuda::fused_q10::hopper_q10_tile_pairs(128.0))
        << tile;
  }
}

TEST(FusedQ10Arm, RefusesLayersItDoesNotCarry) {  // no device needed: refused before any launch
  // gate and up of two formats: no GGUF file has them, and the kernels read one format.
  const auto mixed = tiny_layer(GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q8_0, 256, 128);
  EXPECT_FALSE(cuda::fused_q10::q10_fused_supports(mixed.weights));
  const std::string why = cuda::fused_q10::q10_fused_refusal(mixed.weights);
  EXPECT_NE(why.find("q4_K"), std::string::npos) << why;
  EXPECT_NE(why.find("q6_K"), std::string::npos) << why;
  EXPECT_NE(why.find("d = 256, f = 128"), std::string::npos) << why;
  EXPECT_NE(why.find("share one format"), std::string::npos) << why;
  cuda::fused_q10::Q10Workspace ws;
  try {
    cuda::fused_q10::run_layer_q10(mixed.weights, cuda::DeviceInputs{}, ws, nullptr, nullptr,
                                   cuda::fused_q10::Q10Kernels::kSm80);
    ADD_FAILURE() << "a gate q4_K / up q6_K layer ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("q6_K"), std::string::npos) << e.what();
  }
  // A width the blocks allow but the rule does not see (validate_layer refuses it first): the
  // support check states the geometry rule on its own.
  MoeLayerWeights odd = tiny_layer(GgmlType::Q8_0, GgmlType::Q8_0, GgmlType::Q4_K, 64, 256).weights;
  odd.f = 288;  // not a multiple of q4_K's 256-value block
  EXPECT_FALSE(cuda::fused_q10::q10_fused_supports(odd));
  const std::string geometry = cuda::fused_q10::q10_fused_refusal(odd);
  EXPECT_NE(geometry.find("f = 288"), std::string::npos) << geometry;
  EXPECT_NE(geometry.find("256 values"), std::string::npos) << geometry;
}

}  // namespace
}  // namespace strata
