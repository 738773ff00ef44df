// Whole MoE blocks: routing variants, expert biases, SwiGLU-OAI and shared experts on the CPU
// arms, against the independent double-precision model in support/block_reference; blocks built
// from seeded GGUF files laid out like each architecture's; refusals by name.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>

#include "block/block.hpp"
#include "block_reference.hpp"
#include "common/error.hpp"
#include "cpu/moe_cpu.hpp"
#include "gguf/block_plan.hpp"
#include "gguf_writer.hpp"
#include "bounds.hpp"
#include "moe_check.hpp"
#include "pipeline/routing.hpp"
#include "strata_moe/block.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

using test::RefBlock;
using test::RefScore;

// Same-quantisation bounds of the q8 profile on a whole block of Q8_0 experts (tests/support/bounds.hpp).
constexpr test::StageBounds kBlockBounds = *test::find_bounds(Numerics::kQ8, GgmlType::Q8_0, test::Stage::kBlock);

void expect_close(const float* got, const std::vector<double>& want, int64_t rows, int64_t cols,
                  const std::string& what) {
  const test::ErrorStats e = test::compare_rows(got, want.data(), rows, cols);
  EXPECT_LE(e.rel_rms, kBlockBounds.same_quant_rel_rms) << what;
  EXPECT_LE(e.worst_row, kBlockBounds.same_quant_worst_row) << what << " (row " << e.worst_row_index << ")";
}

// ---- routing ---------------------------------------------------------------------------------
// Identity router: the logits are x itself.
std::vector<float> identity_router(int64_t n) {
  std::vector<float> r(static_cast<size_t>(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i) r[i * n + i] = 1.0f;
  return r;
}

TEST(BlockRouting, GroupsRankBySumOfTopTwoAndTiesGoLow) {
  const std::vector<float> router = identity_router(8);
  // Groups {0,1} {2,3} {4,5} {6,7}: top-2 sums 0, 6, 4, 0 (the best single logit is in group 0).
  const float x[8] = {5, -5, 3, 3, 4, 0, 0, 0};
  RoutingSpec spec;
  spec.score = ScoreFunc::kSoftmaxSelected;
  spec.normalize = false;
  spec.n_group = 4;
  spec.n_group_used = 2;
  int32_t ids[2] = {-1, -1};
  float w[2] = {NAN, NAN};
  route_tokens(router.data(), x, 1, 8, 8, 2, spec, ids, w, 1);
  EXPECT_EQ(ids[0], 4);
  EXPECT_EQ(ids[1], 2);  // logit 3 ties with expert 3: the lower id
  EXPECT_FLOAT_EQ(w[0], 1.0f / (1.0f + std::exp(-1.0f)));
  spec.n_group = 1;
  spec.n_group_used = 1;
  route_tokens(router.data(), x, 1, 8, 8, 2, spec, ids, w, 1);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 4);
}

TEST(BlockRouting, SelectionBiasChoosesButDoesNotWeigh) {
  const std::vector<float> router = identity_router(4);
  const float x[4] = {1.0f, 0.5f, -2.0f, 0.0f};
  const float bias[4] = {0.0f, 0.8f, 0.0f, 0.0f};
  RoutingSpec spec;
  spec.score = ScoreFunc::kSigmoid;
  spec.normalize = false;
  spec.scale = 2.5f;
  spec.selection_bias = bias;
  int32_t ids[1] = {-1};
  float w[1] = {NAN};
  route_tokens(router.data(), x, 1, 4, 4, 1, spec, ids, w, 1);
  EXPECT_EQ(ids[0], 1);
  EXPECT_NEAR(w[0], 2.5 / (1.0 + std::exp(-0.5)), 1e-6);
}

TEST(BlockRouting, VariantsMatchTheReference) {
  const uint64_t seed = test::fresh_seed("BlockRouting.Variants");
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  RefBlock b;
  b.d = 64;
  b.n_expert = 16;
  const int64_t T = 33;
  b.router = test::random_floats(static_cast<size_t>(b.n_expert * b.d), 0.3, rng);
  const std::vector<float> x = test::random_floats(static_cast<size_t>(T * b.d), 1.0, rng);
  const std::vector<float> logit_bias = test::random_floats(16, 0.5, rng);
  const std::vector<float> sel_bias = test::random_floats(16, 0.1, rng);
  struct Case {
    RefScore score;
    bool normalize;
    double scale;
    int groups, used, k;
    bool logit_b, sel_b;
  };
  const Case cases[] = {
      {RefScore::kSoftmax, true, 1.0, 1, 1, 4, false, false},
      {RefScore::kSoftmax, false, 16.0, 1, 1, 6, false, false},
      {RefScore::kSigmoid, true, 2.5, 4, 2, 4, false, true},
      {RefScore::kSigmoid, false, 1.0, 8, 3, 3, false, true},
      {RefScore::kSoftmaxSelected, false, 1.0, 1, 1, 4, true, false},
      {RefScore::kSoftmax, true, 1.0, 2, 1, 8, true, true},
  };
  for (const Case& c : cases) {
    b.score = c.score;
    b.normalize = c.normalize;
    b.scale = c.scale;
    b.groups = c.groups;
    b.groups_used = c.used;
    b.k = c.k;
    b.router_bias = c.logit_b ? logit_bias : std::vector<float>{};
    b.selection_bias = c.sel_b ? sel_bias : std::vector<float>{};
    RoutingSpec spec;
    spec.score = c.score == RefScore::kSoftmax   ? ScoreFunc::kSoftmax
                 : c.score == RefScore::kSigmoid ? ScoreFunc::kSigmoid
                                                 : ScoreFunc::kSoftmaxSelected;
    spec.normalize = c.normalize;
    spec.scale = static_cast<float>(c.scale);
    spec.n_group = c.groups;
    spec.n_group_used = c.used;
    spec.logit_bias = c.logit_b ? logit_bias.data() : nullptr;
    spec.selection_bias = c.sel_b ? sel_bias.data() : nullptr;
    std::vector<int32_t> ids(static_cast<size_t>(T * c.k), -1);
    std::vector<float> w = test::poisoned(T * c.k);
    route_tokens(b.router.data(), x.data(), T, b.d, b.n_expert, c.k, spec, ids.data(), w.data(), 2);
    SCOPED_TRACE(describe_routing(spec, c.k, b.n_expert));
    test::check_routing(b, x.data(), T, ids.data(), w.data(), 1e-5);
    // Thread count never changes the routing.
    std::vector<int32_t> ids1(ids.size());
    std::vector<float> w1(w.size());
    route_tokens(b.router.data(), x.data(), T, b.d, b.n_expert, c.k, spec, ids1.data(), w1.data(),
                 1);
    EXPECT_EQ(ids, ids1);
    EXPECT_EQ(test::count_bitwise_diffs(w.data(), w1.data(), T * c.k), 0);
  }
}

TEST(BlockRouting, RefusesRulesThatCannotRoute) {
  RoutingSpec spec;
  spec.n_group = 3;
  spec.n_group_used = 1;
  EXPECT_THROW(validate_routing_spec(spec, 16, 2), Error);  // 3 does not divide 16
  spec.n_group = 8;
  EXPECT_NO_THROW(validate_routing_spec(spec, 16, 2));
  EXPECT_THROW(validate_routing_spec(spec, 16, 3), Error);  // one group of 2 cannot give 3
  spec.n_group = 16;
  EXPECT_THROW(validate_routing_spec(spec, 16, 1), Error);  // groups of one expert
}

// ---- layers and blocks ---------------------------------------------------------------------
MoeLayerWeights layer_of(const RefBlock& b, const std::string& name) {
  MoeLayerWeights w;
  w.d = b.d;
  w.f = b.f;
  w.n_expert = b.n_expert;
  w.gate =
      make_expert_tensor(name + ".gate", GgmlType::Q8_0, b.gate.bytes.data(), b.d, b.f, b.n_expert);
  w.up = make_expert_tensor(name + ".up", GgmlType::Q8_0, b.up.bytes.data(), b.d, b.f, b.n_expert);
  w.down =
      make_expert_tensor(name + ".down", GgmlType::Q8_0, b.down.bytes.data(), b.f, b.d, b.n_expert);
  return w;
}

// The arm's gate, up and h of every pair of a layer against the reference's.
void expect_stages(const test::Q8Weights& gate, const test::Q8Weights& up,
                   const test::Q8Weights& down, const RefBlock* biases, bool oai, const float* x,
                   int64_t n_tokens, int k, const int32_t* ids, const CpuDebugOutputs& dbg,
                   const std::string& what) {
  const int64_t d = gate.in, f = gate.out;
  std::vector<double> g_ref, u_ref, h_ref;
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int j = 0; j < k; ++j) {
      const int64_t slot = t * k + j;
      const auto e = test::reference_expert(
          gate, up, down, ids ? ids[slot] : 0, biases ? &biases->gate_bias : nullptr,
          biases ? &biases->up_bias : nullptr, biases ? &biases->down_bias : nullptr, oai,
          x + t * d, dbg.h.data() + slot * f);
      g_ref.insert(g_ref.end(), e.gate.begin(), e.gate.end());
      u_ref.insert(u_ref.end(), e.up.begin(), e.up.end());
      h_ref.insert(h_ref.end(), e.h.begin(), e.h.end());
    }
  expect_close(dbg.gate.data(), g_ref, n_tokens * k, f, what + " gate");
  expect_close(dbg.up.data(), u_ref, n_tokens * k, f, what + " up");
  expect_close(dbg.h.data(), h_ref, n_tokens * k, f, what + " h");
}

// Random distinct ids and positive weights.
void random_routing(int64_t T, int k, int64_t E, std::mt19937_64& rng, std::vector<int32_t>& ids,
                    std::vector<float>& w) {
  ids.resize(static_cast<size_t>(T * k));
  w.resize(ids.size());
  std::uniform_real_distribution<float> unit(0.05f, 1.0f);
  for (int64_t t = 0; t < T; ++t) {
    std::vector<int32_t> all(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) all[e] = static_cast<int32_t>(e);
    std::shuffle(all.begin(), all.end(), rng);
    for (int j = 0; j < k; ++j) {
      ids[t * k + j] = all[j];
      w[t * k + j] = unit(rng);
    }
  }
}

TEST(BlockLayer, BiasesAndSwigluOaiMatchTheReferenceOnEveryArm) {
  for (const bool oai : {true, false}) {
    const uint64_t seed = test::fresh_seed("BlockLayer.Biases");
    SCOPED_TRACE("seed " + std::to_string(seed) + (oai ? " swiglu-oai" : " swiglu"));
    std::mt19937_64 rng(seed);
    RefBlock b;
    b.d = 128;
    b.f = 96;
    b.n_expert = 6;
    b.k = 3;
    b.oai = oai;
    b.gate = test::random_q8(b.d, b.f, b.n_expert, rng);
    b.up = test::random_q8(b.d, b.f, b.n_expert, rng);
    b.down = test::random_q8(b.f, b.d, b.n_expert, rng);
    const std::vector<float> gb =
        test::random_floats(static_cast<size_t>(b.n_expert * b.f), 2.0, rng);
    const std::vector<float> ub = test::random_floats(gb.size(), 2.0, rng);
    const std::vector<float> db =
        test::random_floats(static_cast<size_t>(b.n_expert * b.d), 1.0, rng);
    b.gate_bias.assign(gb.begin(), gb.end());
    b.up_bias.assign(ub.begin(), ub.end());
    b.down_bias.assign(db.begin(), db.end());
    const int64_t T = 29;
    const std::vector<float> x = test::random_floats(static_cast<size_t>(T * b.d), 1.5, rng);
    std::vector<int32_t> ids;
    std::vector<float> w;
    random_routing(T, b.k, b.n_expert, rng, ids, w);

    MoeLayerWeights layer = layer_of(b, "biased");
    layer.gate_bias = gb.data();
    layer.up_bias = ub.data();
    layer.down_bias = db.data();
    if (oai) layer.activation.kind = ActivationKind::kSwiGLUOai;
    const LayerInputs in{x.data(), ids.data(), w.data(), T, b.k};
    std::vector<float> y_prod = test::poisoned(T * b.d), y_fused = test::poisoned(T * b.d),
                       y_threads = test::poisoned(T * b.d);
    CpuDebugOutputs dbg, dbg_fused;
    run_layer_cpu(layer, in, Arm::kProduction, 1, y_prod.data(), &dbg);
    run_layer_cpu(layer, in, Arm::kFused, 2, y_fused.data(), &dbg_fused);
    run_layer_cpu(layer, in, Arm::kProduction, 0, y_threads.data());
    EXPECT_EQ(test::count_bitwise_diffs(y_prod.data(), y_fused.data(), T * b.d), 0);
    EXPECT_EQ(test::count_bitwise_diffs(y_prod.data(), y_threads.data(), T * b.d), 0);
    EXPECT_EQ(test::count_bitwise_diffs(dbg.h.data(), dbg_fused.h.data(), T * b.k * b.f), 0);

    // Stage by stage, then the layer.
    int64_t clamped = 0;
    std::vector<double> gate_ref, up_ref, h_ref;
    for (int64_t t = 0; t < T; ++t)
      for (int j = 0; j < b.k; ++j) {
        const int64_t slot = t * b.k + j;
        const auto e = test::reference_expert(b.gate, b.up, b.down, ids[slot], &b.gate_bias,
                                              &b.up_bias, &b.down_bias, oai, x.data() + t * b.d,
                                              dbg.h.data() + slot * b.f);
        gate_ref.insert(gate_ref.end(), e.gate.begin(), e.gate.end());
        up_ref.insert(up_ref.end(), e.up.begin(), e.up.end());
        h_ref.insert(h_ref.end(), e.h.begin(), e.h.end());
        for (double g : e.gate) clamped += g > 7.0;
      }
    if (oai) {
      EXPECT_GT(clamped, 0) << "no gate value reaches the clamp: the case tests too little";
    }
    expect_close(dbg.gate.data(), gate_ref, T * b.k, b.f, "gate + bias");
    expect_close(dbg.up.data(), up_ref, T * b.k, b.f, "up + bias");
    expect_close(dbg.h.data(), h_ref, T * b.k, b.f, "h");
    std::vector<double> wd(w.begin(), w.end());
    expect_close(y_prod.data(), test::reference_block(b, x.data(), T, ids.data(), wd, dbg.h, {}), T,
                 b.d, "y");
  }
}

// ---- GGUF files per architecture ---------------------------------------------------------------
struct ArchCase {
  std::string name;  // test label
  std::string arch;
  RefScore score = RefScore::kSoftmax;
  std::optional<int> gating_key;  // {arch}.expert_gating_func when set
  bool normalize = true;
  std::optional<bool> norm_key;
  double scale = 1.0;
  int groups = 1, groups_used = 1;
  int shared = 0;  // 0 none, 1 unscaled, 2 sigmoid-gated
  int64_t shared_f = 64;
  bool merged = false;
  int per_expert = 0;  // 1 in file order, 2 shuffled
  bool router_bias = false, expert_biases = false, selection_bias = false, oai = false;
  int lead_dense = 0;
  int k = 2;
};

std::string layer_name(int l, const char* suffix) {
  return "blk." + std::to_string(l) + "." + suffix;
}

// Writes `c` as a GGUF file (dense leading layers, then one MoE layer) and fills the reference.
test::GgufWriter arch_file(const ArchCase& c, RefBlock& b, std::mt19937_64& rng) {
  b.d = 128;
  b.f = 64;
  b.n_expert = 8;
  b.k = c.k;
  b.score = c.score;
  b.normalize = c.normalize;
  b.scale = c.scale;
  b.groups = c.groups;
  b.groups_used = c.groups_used;
  b.oai = c.oai;
  b.gate = test::random_q8(b.d, b.f, b.n_expert, rng);
  b.up = test::random_q8(b.d, b.f, b.n_expert, rng);
  b.down = test::random_q8(b.f, b.d, b.n_expert, rng);
  b.router = test::random_floats(static_cast<size_t>(b.n_expert * b.d), 0.3, rng);
  test::GgufWriter w;
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  const auto f32_bytes = [](const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
  };
  const auto put = [&](const std::string& name, GgmlType type, std::vector<uint64_t> ne,
                       std::vector<uint8_t> data) {
    w.tensor(name, type, std::move(ne)).data = std::move(data);
  };
  const std::string a = c.arch;
  w.kv("general.architecture", test::meta_string(a));
  w.kv("general.alignment", test::meta_u32(32));
  w.kv(a + ".block_count", test::meta_u32(static_cast<uint32_t>(c.lead_dense + 1)));
  w.kv(a + ".embedding_length", test::meta_u32(static_cast<uint32_t>(b.d)));
  w.kv(a + ".expert_feed_forward_length", test::meta_u32(static_cast<uint32_t>(b.f)));
  w.kv(a + ".expert_count", test::meta_u32(static_cast<uint32_t>(b.n_expert)));
  w.kv(a + ".expert_used_count", test::meta_u32(static_cast<uint32_t>(c.k)));
  if (c.gating_key)
    w.kv(a + ".expert_gating_func", test::meta_u32(static_cast<uint32_t>(*c.gating_key)));
  if (c.norm_key) w.kv(a + ".expert_weights_norm", test::meta_bool(*c.norm_key));
  if (c.scale != 1.0)
    w.kv(a + ".expert_weights_scale", test::meta_f32(static_cast<float>(c.scale)));
  if (c.groups > 1) {
    w.kv(a + ".expert_group_count", test::meta_u32(static_cast<uint32_t>(c.groups)));
    w.kv(a + ".expert_group_used_count", test::meta_u32(static_cast<uint32_t>(c.groups_used)));
  }
  if (c.lead_dense > 0)
    w.kv(a + ".leading_dense_block_count", test::meta_u32(static_cast<uint32_t>(c.lead_dense)));
  if (c.shared == 1)
    w.kv(a + ".expert_shared_count", test::meta_u32(static_cast<uint32_t>(c.shared_f / b.f)));
  w.tensor("token_embd.weight", GgmlType::F32, {u(b.d), 4});
  for (int l = 0; l < c.lead_dense; ++l) {
    w.tensor(layer_name(l, "ffn_norm.weight"), GgmlType::F32, {u(b.d)});
    w.tensor(layer_name(l, "ffn_gate.weight"), GgmlType::F16, {u(b.d), 96});
    w.tensor(layer_name(l, "ffn_up.weight"), GgmlType::F16, {u(b.d), 96});
    w.tensor(layer_name(l, "ffn_down.weight"), GgmlType::F16, {96, u(b.d)});
  }
  const int l = c.lead_dense;
  w.tensor(layer_name(l, "attn_norm.weight"), GgmlType::F32, {u(b.d)});
  w.tensor(layer_name(l, "ffn_norm.weight"), GgmlType::F32, {u(b.d)});
  put(layer_name(l, "ffn_gate_inp.weight"), GgmlType::F32, {u(b.d), u(b.n_expert)},
      f32_bytes(b.router));
  if (c.router_bias) {
    b.router_bias = test::random_floats(static_cast<size_t>(b.n_expert), 0.5, rng);
    put(layer_name(l, "ffn_gate_inp.bias"), GgmlType::F32, {u(b.n_expert)},
        f32_bytes(b.router_bias));
  }
  if (c.selection_bias) {
    b.selection_bias = test::random_floats(static_cast<size_t>(b.n_expert), 0.1, rng);
    put(layer_name(l, "exp_probs_b.bias"), GgmlType::F32, {u(b.n_expert)},
        f32_bytes(b.selection_bias));
  }
  if (c.per_expert > 0) {
    std::vector<int64_t> order(static_cast<size_t>(b.n_expert));
    for (int64_t e = 0; e < b.n_expert; ++e) order[e] = e;
    if (c.per_expert == 2) std::shuffle(order.begin(), order.end(), rng);
    for (int64_t e : order) {
      const std::string n = std::to_string(e);
      put(layer_name(l, ("ffn_gate." + n + ".weight").c_str()), GgmlType::Q8_0, {u(b.d), u(b.f)},
          b.gate.expert_bytes(e));
      put(layer_name(l, ("ffn_down." + n + ".weight").c_str()), GgmlType::Q8_0, {u(b.f), u(b.d)},
          b.down.expert_bytes(e));
      put(layer_name(l, ("ffn_up." + n + ".weight").c_str()), GgmlType::Q8_0, {u(b.d), u(b.f)},
          b.up.expert_bytes(e));
    }
  } else {
    if (c.merged) {
      std::vector<uint8_t> merged;
      for (int64_t e = 0; e < b.n_expert; ++e) {
        const auto g = b.gate.expert_bytes(e), up = b.up.expert_bytes(e);
        merged.insert(merged.end(), g.begin(), g.end());
        merged.insert(merged.end(), up.begin(), up.end());
      }
      put(layer_name(l, "ffn_gate_up_exps.weight"), GgmlType::Q8_0,
          {u(b.d), u(2 * b.f), u(b.n_expert)}, merged);
    } else {
      put(layer_name(l, "ffn_gate_exps.weight"), GgmlType::Q8_0, {u(b.d), u(b.f), u(b.n_expert)},
          b.gate.bytes);
      put(layer_name(l, "ffn_up_exps.weight"), GgmlType::Q8_0, {u(b.d), u(b.f), u(b.n_expert)},
          b.up.bytes);
    }
    put(layer_name(l, "ffn_down_exps.weight"), GgmlType::Q8_0, {u(b.f), u(b.d), u(b.n_expert)},
        b.down.bytes);
  }
  if (c.expert_biases) {
    const auto gb = test::random_floats(static_cast<size_t>(b.n_expert * b.f), 2.0, rng);
    const auto ub = test::random_floats(gb.size(), 2.0, rng);
    const auto db = test::random_floats(static_cast<size_t>(b.n_expert * b.d), 1.0, rng);
    b.gate_bias.assign(gb.begin(), gb.end());
    b.up_bias.assign(ub.begin(), ub.end());
    b.down_bias.assign(db.begin(), db.end());
    put(layer_name(l, "ffn_gate_exps.bias"), GgmlType::F32, {u(b.f), u(b.n_expert)}, f32_bytes(gb));
    put(layer_name(l, "ffn_up_exps.bias"), GgmlType::F32, {u(b.f), u(b.n_expert)}, f32_bytes(ub));
    put(layer_name(l, "ffn_down_exps.bias"), GgmlType::F32, {u(b.d), u(b.n_expert)}, f32_bytes(db));
  }
  if (c.shared > 0) {
    RefBlock::Shared s{test::random_q8(b.d, c.shared_f, 1, rng),
                       test::random_q8(b.d, c.shared_f, 1, rng),
                       test::random_q8(c.shared_f, b.d, 1, rng),
                       {}};
    put(layer_name(l, "ffn_gate_shexp.weight"), GgmlType::Q8_0, {u(b.d), u(c.shared_f)},
        s.gate.bytes);
    put(layer_name(l, "ffn_up_shexp.weight"), GgmlType::Q8_0, {u(b.d), u(c.shared_f)}, s.up.bytes);
    put(layer_name(l, "ffn_down_shexp.weight"), GgmlType::Q8_0, {u(c.shared_f), u(b.d)},
        s.down.bytes);
    if (c.shared == 2) {
      s.gate_inp = test::random_floats(static_cast<size_t>(b.d), 0.2, rng);
      put(layer_name(l, "ffn_gate_inp_shexp.weight"), GgmlType::F32, {u(b.d)},
          f32_bytes(s.gate_inp));
    }
    b.shared.push_back(std::move(s));
  }
  return w;
}

std::vector<ArchCase> arch_cases() {
  std::vector<ArchCase> cases;
  ArchCase c;
  c.name = "qwen3moe";
  c.arch = "qwen3moe";
  cases.push_back(c);
  c.name = "qwen3next_gated_shared";
  c.arch = "qwen3next";
  c.shared = 2;
  cases.push_back(c);
  c.name = "qwen35moe_merged_gated_shared";
  c.arch = "qwen35moe";
  c.merged = true;
  c.shared_f = 96;
  cases.push_back(c);
  c = ArchCase{};
  c.name = "deepseek3_sigmoid_groups_bias_scale_shared";
  c.arch = "deepseek2";
  c.score = RefScore::kSigmoid;
  c.gating_key = 2;
  c.norm_key = true;
  c.scale = 2.5;
  c.groups = 4;
  c.groups_used = 2;
  c.selection_bias = true;
  c.shared = 1;
  c.shared_f = 128;
  c.lead_dense = 1;
  c.k = 3;
  cases.push_back(c);
  c = ArchCase{};
  c.name = "deepseek2_v2_softmax_unnormalised";
  c.arch = "deepseek2";
  c.normalize = false;
  c.scale = 16.0;
  c.shared = 1;
  c.lead_dense = 2;
  cases.push_back(c);
  c = ArchCase{};
  c.name = "glm4moe_sigmoid_default";
  c.arch = "glm4moe";
  c.score = RefScore::kSigmoid;
  c.norm_key = true;
  c.scale = 1.5;
  c.selection_bias = true;
  c.shared = 1;
  c.lead_dense = 1;
  cases.push_back(c);
  c = ArchCase{};
  c.name = "gpt_oss_biases_oai";
  c.arch = "gpt-oss";
  c.score = RefScore::kSoftmaxSelected;
  c.normalize = false;
  c.router_bias = true;
  c.expert_biases = true;
  c.oai = true;
  c.k = 4;
  cases.push_back(c);
  c = ArchCase{};
  c.name = "mixtral_merged";
  c.arch = "llama";
  cases.push_back(c);
  c.name = "mixtral_per_expert";
  c.per_expert = 1;
  cases.push_back(c);
  c.name = "mixtral_per_expert_shuffled";
  c.per_expert = 2;
  cases.push_back(c);
  return cases;
}

class ArchBlock : public ::testing::TestWithParam<ArchCase> {};

TEST_P(ArchBlock, RunsAsTheReferenceAndBitwiseOnEveryArm) {
  const ArchCase& c = GetParam();
  const uint64_t seed = test::fresh_seed("ArchBlock." + c.name);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  RefBlock ref;
  const test::GgufWriter writer = arch_file(c, ref, rng);
  const auto path = std::filesystem::temp_directory_path() /
                    ("strata_block_" + c.name + "_" + std::to_string(seed) + ".gguf");
  writer.write(path);
  const gguf::Model model = gguf::Model::open(path);
  std::filesystem::remove(path);  // the mapping stays valid
  const int layer = c.lead_dense;
  const auto built = gguf::build_block(model, layer);
  const MoeBlock& block = built->block;
  EXPECT_EQ(block.shared.size(), c.shared > 0 ? 1u : 0u);
  EXPECT_EQ(block.routed.has_biases(), c.expert_biases);
  for (int l = 0; l < c.lead_dense; ++l) {
    try {
      gguf::build_block(model, l);
      ADD_FAILURE() << "dense layer " << l << " built as an MoE block";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("dense FFN layer"), std::string::npos) << e.what();
    }
  }

  const int64_t T = 23;
  const std::vector<float> x = test::random_floats(static_cast<size_t>(T * ref.d), 1.5, rng);
  BlockRunner runner(block, "cpu");
  std::vector<float> y = test::poisoned(T * ref.d), y_fused = test::poisoned(T * ref.d);
  std::vector<int32_t> ids, ids_fused;
  std::vector<float> w, w_fused;
  // q8 named: the pieces below are checked against the q8 CPU arm.
  RunOptions production;
  production.arm = Arm::kProduction;
  production.numerics = Numerics::kQ8;
  RunOptions one_thread = production;
  one_thread.threads = 1;
  one_thread.arm = Arm::kFused;
  EXPECT_EQ(runner.run(x.data(), T, nullptr, nullptr, 0, production, y.data(), &ids, &w).arm, Arm::kProduction);
  const RunReport fused = runner.run(x.data(), T, nullptr, nullptr, 0, one_thread, y_fused.data(), &ids_fused,
                                     &w_fused);
  EXPECT_EQ(fused.arm, Arm::kFused);
  EXPECT_EQ(fused.numerics, Numerics::kQ8);
  EXPECT_EQ(fused.fallback, "");
  EXPECT_EQ(ids, ids_fused);
  EXPECT_EQ(test::count_bitwise_diffs(y.data(), y_fused.data(), T * ref.d), 0);
  test::check_routing(ref, x.data(), T, ids.data(), w.data(), 1e-5);

  // The pieces: the routed layer and each shared expert, with their arm h.
  CpuDebugOutputs routed_dbg;
  std::vector<float> y_routed(static_cast<size_t>(T * ref.d));
  run_layer_cpu(block.routed, LayerInputs{x.data(), ids.data(), w.data(), T, ref.k},
                Arm::kProduction, 1, y_routed.data(), &routed_dbg);
  expect_stages(ref.gate, ref.up, ref.down, &ref, ref.oai, x.data(), T, ref.k, ids.data(),
                routed_dbg, "routed");
  std::vector<std::vector<float>> shared_h;
  std::vector<float> composed = y_routed;
  for (const SharedExpert& s : block.shared) {
    const std::vector<int32_t> zero(static_cast<size_t>(T), 0);
    const std::vector<float> one(static_cast<size_t>(T), 1.0f);
    CpuDebugOutputs dbg;
    std::vector<float> ys(static_cast<size_t>(T * ref.d));
    run_layer_cpu(s.ffn, LayerInputs{x.data(), zero.data(), one.data(), T, 1}, Arm::kProduction, 1,
                  ys.data(), &dbg);
    const RefBlock::Shared& rs = ref.shared[shared_h.size()];
    expect_stages(rs.gate, rs.up, rs.down, nullptr, false, x.data(), T, 1, nullptr, dbg, "shared");
    shared_h.push_back(dbg.h);
    std::vector<float> scale(static_cast<size_t>(T), 1.0f);
    if (s.gate != nullptr) sigmoid_gate(s.gate, x.data(), T, ref.d, scale.data(), 1);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < ref.d; ++i)
        composed[t * ref.d + i] = std::fma(scale[t], ys[t * ref.d + i], composed[t * ref.d + i]);
  }
  // NOTE: the block's combine order is the routed slots, then the shared experts.
  EXPECT_EQ(test::count_bitwise_diffs(y.data(), composed.data(), T * ref.d), 0);
  const std::vector<double> wd = test::reference_weights(ref, x.data(), T, ids.data());
  expect_close(y.data(),
               test::reference_block(ref, x.data(), T, ids.data(), wd, routed_dbg.h, shared_h), T,
               ref.d, "block y");
  if (c.shared > 0) {
    // The shared expert is really there: without it the output is far from the reference.
    const test::ErrorStats e = test::compare_rows(
        y_routed.data(),
        test::reference_block(ref, x.data(), T, ids.data(), wd, routed_dbg.h, shared_h).data(), T,
        ref.d);
    EXPECT_GT(e.rel_rms, 1e-2);
  }

  // info's plan of the same file agrees and says what runs it.
  const auto plans = gguf::plan_blocks(model);
  ASSERT_EQ(plans.size(), static_cast<size_t>(c.lead_dense + 1));
  EXPECT_EQ(plans.back().kind, gguf::BlockKind::kMoe);
  EXPECT_EQ(plans.back().cpu, "");
  // The CUDA column is the registry's: either some CUDA arm carries q8_0 or the reason names it.
  EXPECT_EQ(plans.back().cuda.empty(), !plans.back().cuda_q8.empty() || !plans.back().cuda_q10.empty());
  const std::string& cuda_why = plans.back().cuda;
  if (!cuda_why.empty()) {
    EXPECT_TRUE(cuda_why.find("q8_0") != std::string::npos || cuda_why.find("without CUDA") != std::string::npos ||
                cuda_why.find("on the cpu backend only") != std::string::npos)
        << cuda_why;
  }
  EXPECT_EQ(plans.back().cpu_q8, (std::vector<std::string>{"production", "fused"}));
  EXPECT_EQ(plans.back().cpu_q10, (std::vector<std::string>{"production", "fused"}));
  for (int l = 0; l < c.lead_dense; ++l) EXPECT_EQ(plans[l].kind, gguf::BlockKind::kDense);
}

INSTANTIATE_TEST_SUITE_P(Architectures, ArchBlock, ::testing::ValuesIn(arch_cases()),
                         [](const auto& info) { return info.param.name; });

// ---- refusals ----------------------------------------------------------------------------------
void expect_refused(const std::function<void(test::GgufWriter&)>& damage, const ArchCase& c,
                    Status status, const std::string& needle) {
  std::mt19937_64 rng(test::fresh_seed("refusal" + needle));
  RefBlock ref;
  test::GgufWriter writer = arch_file(c, ref, rng);
  damage(writer);
  const auto path = std::filesystem::temp_directory_path() /
                    ("strata_refusal_" + std::to_string(rng()) + ".gguf");
  writer.write(path);
  const gguf::Model model = gguf::Model::open(path);
  std::filesystem::remove(path);
  try {
    gguf::build_block(model, c.lead_dense);
    ADD_FAILURE() << "built a block that should be refused (" << needle << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_TRUE(std::string(e.what()).starts_with(path.string() + ": ")) << e.what();
  }
  // info still describes the layer and says why it cannot run.
  const auto plans = gguf::plan_blocks(model);
  ASSERT_FALSE(plans.empty());
  EXPECT_NE(plans.back().cpu.find(needle), std::string::npos) << plans.back().cpu;
}

ArchCase case_named(const std::string& name) {
  for (const ArchCase& c : arch_cases())
    if (c.name == name) return c;
  throw std::runtime_error(name);
}

TEST(BlockRefusal, UnknownArchitecture) {
  ArchCase c = case_named("qwen3moe");
  c.arch = "grok";
  expect_refused([](test::GgufWriter&) {}, c, Status::kUnsupported, "architecture 'grok'");
}

TEST(BlockRefusal, UnexpectedTensorInTheBlock) {
  expect_refused(
      [](test::GgufWriter& w) { w.tensor("blk.0.ffn_up_exps_s.weight", GgmlType::F32, {8}); },
      case_named("qwen3moe"), Status::kUnsupported, "blk.0.ffn_up_exps_s.weight");
  expect_refused(
      [](test::GgufWriter& w) {
        w.tensor("blk.0.ffn_gate_exps.bias", GgmlType::F32, {64, 8});
      },
      case_named("qwen3moe"), Status::kUnsupported, "blk.0.ffn_gate_exps.bias");
  expect_refused(
      [](test::GgufWriter& w) {
        w.tensor("blk.0.ffn_gate_shexp.weight", GgmlType::Q8_0, {128, 64});
      },
      case_named("gpt_oss_biases_oai"), Status::kUnsupported, "blk.0.ffn_gate_shexp.weight");
}

TEST(BlockRefusal, MissingSharedExpertTensor) {
  // qwen35moe's graph always has the gated shared expert.
  ArchCase c = case_named("qwen35moe_merged_gated_shared");
  c.shared = 0;
  expect_refused([](test::GgufWriter&) {}, c, Status::kUnsupported, "blk.0.ffn_gate_shexp.weight");
  // A gated shared expert without its gate.
  c = case_named("qwen3next_gated_shared");
  c.shared = 1;
  expect_refused([](test::GgufWriter&) {}, c, Status::kUnsupported,
                 "blk.0.ffn_gate_inp_shexp.weight");
  // deepseek2 with expert_shared_count > 0 but no shared tensors.
  c = case_named("deepseek2_v2_softmax_unnormalised");
  expect_refused(
      [&](test::GgufWriter& w) { w.kv("deepseek2.expert_shared_count", test::meta_u32(1)); },
      [&] {
        ArchCase d = c;
        d.shared = 0;
        return d;
      }(),
      Status::kUnsupported, "blk.2.ffn_gate_shexp.weight");
}

TEST(BlockRefusal, GatingFunctionOutOfRangeOrNotComputed) {
  ArchCase c = case_named("glm4moe_sigmoid_default");
  c.gating_key = 9;
  expect_refused([](test::GgufWriter&) {}, c, Status::kBadFile, "glm4moe.expert_gating_func");
  c.gating_key = 4;
  expect_refused([](test::GgufWriter&) {}, c, Status::kUnsupported, "sqrt-softplus");
  c = case_named("qwen3moe");
  c.gating_key = 2;  // qwen3moe's graph is softmax whatever the key says
  expect_refused([](test::GgufWriter&) {}, c, Status::kUnsupported, "qwen3moe.expert_gating_func");
}

TEST(BlockRefusal, KeysTheBlockDoesNotHonour) {
  expect_refused(
      [](test::GgufWriter& w) { w.kv("qwen3moe.swiglu_clamp_exp", test::meta_f32(7.0f)); },
      case_named("qwen3moe"), Status::kUnsupported, "qwen3moe.swiglu_clamp_exp");
  expect_refused(
      [](test::GgufWriter& w) { w.kv("deepseek2.expert_group_scale", test::meta_f32(1.0f)); },
      case_named("deepseek2_v2_softmax_unnormalised"), Status::kUnsupported,
      "deepseek2.expert_group_scale");
}

TEST(BlockRefusal, IntegerKeysBeyondTheirRangeAreNotNarrowed) {
  // 2^32 + 2 would read as 2 if cut to 32 bits.
  const uint64_t wide = (uint64_t{1} << 32) + 2;
  expect_refused(
      [&](test::GgufWriter& w) { w.set_kv("qwen3moe.expert_used_count", test::meta_u64(wide)); },
      case_named("qwen3moe"), Status::kBadFile, "qwen3moe.expert_used_count': 4294967298");
  const ArchCase groups = case_named("deepseek3_sigmoid_groups_bias_scale_shared");
  expect_refused(
      [&](test::GgufWriter& w) { w.set_kv("deepseek2.expert_group_count", test::meta_u64(wide)); },
      groups, Status::kBadFile, "deepseek2.expert_group_count': 4294967298 groups of 8 experts");
  expect_refused(
      [&](test::GgufWriter& w) {
        w.set_kv("deepseek2.expert_group_used_count", test::meta_u64(wide));
      },
      groups, Status::kBadFile, "deepseek2.expert_group_used_count': 4294967298 is more than");
}

TEST(BlockRefusal, ScaleOutsideFloatRange) {
  const ArchCase c = case_named("deepseek2_v2_softmax_unnormalised");
  // Non-zero but below float's smallest subnormal: it would round to 0, which means "no scale".
  expect_refused(
      [](test::GgufWriter& w) { w.set_kv("deepseek2.expert_weights_scale", test::meta_f64(1e-320)); },
      c, Status::kBadFile, "deepseek2.expert_weights_scale': 1e-320 is outside float's range");
  expect_refused(
      [](test::GgufWriter& w) { w.set_kv("deepseek2.expert_weights_scale", test::meta_f64(1e300)); },
      c, Status::kBadFile, "deepseek2.expert_weights_scale': 1e+300 is outside float's range");
}

TEST(BlockRefusal, SmallTensorsOfTheWrongShape) {
  // The down bias of E rows of d values written as [E, d] instead of ggml's [d, E]: the same
  // count, another layout.
  const ArchCase oss = case_named("gpt_oss_biases_oai");
  expect_refused(
      [](test::GgufWriter& w) {
        w.find_tensor("blk.0.ffn_down_exps.bias")->ne = {8, 128};
      },
      oss, Status::kBadFile, "tensor 'blk.0.ffn_down_exps.bias': shape [8, 128], expected [128, 8]");
  const ArchCase ds = case_named("deepseek3_sigmoid_groups_bias_scale_shared");
  expect_refused(
      [](test::GgufWriter& w) { w.find_tensor("blk.1.exp_probs_b.bias")->ne = {4, 2}; },
      ds, Status::kBadFile, "tensor 'blk.1.exp_probs_b.bias': shape [4, 2], expected [8]");
}

TEST(BlockRefusal, SharedGateTakesTrailingUnitDimensions) {
  // ggml compares shapes with trailing 1s ignored: a shared-expert gate written [d, 1] (as
  // converters write a (1, d) weight) is the [d] tensor; [1, d] is not.
  ArchCase c = case_named("qwen35moe_merged_gated_shared");
  std::mt19937_64 rng(test::fresh_seed("shexp-gate-shape"));
  RefBlock ref;
  test::GgufWriter w = arch_file(c, ref, rng);
  w.find_tensor("blk.0.ffn_gate_inp_shexp.weight")->ne = {128, 1};
  const auto path = std::filesystem::temp_directory_path() /
                    ("strata_shexp_gate_" + std::to_string(rng()) + ".gguf");
  w.write(path);
  const gguf::Model model = gguf::Model::open(path);
  std::filesystem::remove(path);
  EXPECT_NO_THROW(gguf::build_block(model, c.lead_dense));
  expect_refused(
      [](test::GgufWriter& w) { w.find_tensor("blk.0.ffn_gate_inp_shexp.weight")->ne = {1, 128}; },
      c, Status::kBadFile, "tensor 'blk.0.ffn_gate_inp_shexp.weight': shape [1, 128], expected [128]");
}

TEST(BlockRefusal, ExpertsInAFormatWithoutAnInt8Path) {
  // f16 experts: info describes them, run refuses naming the tensor and its type.
  std::mt19937_64 rng(test::fresh_seed("f16"));
  test::GgufWriter f16;
  f16.kv("general.architecture", test::meta_string("qwen3moe"));
  f16.kv("qwen3moe.expert_used_count", test::meta_u32(2));
  f16.tensor("blk.0.ffn_gate_inp.weight", GgmlType::F16, {64, 4});
  f16.tensor("blk.0.ffn_gate_exps.weight", GgmlType::F16, {64, 32, 4});
  f16.tensor("blk.0.ffn_up_exps.weight", GgmlType::BF16, {64, 32, 4});
  f16.tensor("blk.0.ffn_down_exps.weight", GgmlType::F16, {32, 64, 4});
  const auto path =
      std::filesystem::temp_directory_path() / ("strata_f16_" + std::to_string(rng()) + ".gguf");
  f16.write(path);
  const gguf::Model model = gguf::Model::open(path);
  std::filesystem::remove(path);
  const auto plans = gguf::plan_blocks(model);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].gate_type, "f16");
  EXPECT_EQ(plans[0].up_type, "bf16");
  EXPECT_EQ(plans[0].n_expert, 4);
  EXPECT_NE(plans[0].cpu.find("blk.0.ffn_gate_exps.weight"), std::string::npos) << plans[0].cpu;
  EXPECT_THROW(gguf::build_block(model, 0), Error);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

strata_moe_layer_desc desc_of(const test::Q8Weights& g, const test::Q8Weights& u,
                              const test::Q8Weights& dn) {
  strata_moe_layer_desc desc{};
  desc.d = g.in;
  desc.f = g.out;
  desc.n_expert = g.experts;
  desc.gate = {
      static_cast<uint32_t>(GgmlType::Q8_0), g.bytes.data(), g.in, g.out, g.experts, 0, "gate"};
  desc.up = {
      static_cast<uint32_t>(GgmlType::Q8_0), u.bytes.data(), u.in, u.out, u.experts, 0, "up"};
  desc.down = {
      static_cast<uint32_t>(GgmlType::Q8_0), dn.bytes.data(), dn.in, dn.out, dn.experts, 0, "down"};
  return desc;
}

// The C and C++ APIs build the same block as the library's BlockRunner, bit for bit.
TEST(BlockApi, CApiMatchesTheLibraryBlock) {
  const uint64_t seed = test::fresh_seed("BlockApi");
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t d = 128, f = 64, E = 8, T = 17;
  const auto g = test::random_q8(d, f, E, rng), u = test::random_q8(d, f, E, rng),
             dn = test::random_q8(f, d, E, rng);
  const auto sg = test::random_q8(d, 64, 1, rng), su = test::random_q8(d, 64, 1, rng),
             sd = test::random_q8(64, d, 1, rng);
  const auto router = test::random_floats(static_cast<size_t>(E * d), 0.3, rng);
  const auto sel_bias = test::random_floats(static_cast<size_t>(E), 0.1, rng);
  const auto gate_inp = test::random_floats(static_cast<size_t>(d), 0.2, rng);
  const auto gb = test::random_floats(static_cast<size_t>(E * f), 1.0, rng);
  const auto db = test::random_floats(static_cast<size_t>(E * d), 1.0, rng);
  const auto x = test::random_floats(static_cast<size_t>(T * d), 1.5, rng);

  strata_moe_shared_expert_desc shared{desc_of(sg, su, sd), gate_inp.data()};
  strata_moe_block_desc desc{};
  desc.routed = desc_of(g, u, dn);
  desc.gate_bias = gb.data();
  desc.down_bias = db.data();
  desc.activation = STRATA_MOE_ACTIVATION_SWIGLU_OAI;
  desc.routing = {router.data(),  3, STRATA_MOE_SCORE_SIGMOID, 1, 2.5f, 4, 2, nullptr,
                  sel_bias.data()};
  desc.shared = &shared;
  desc.n_shared = 1;
  strata_moe::Block block(STRATA_MOE_BACKEND_CPU, desc);
  std::vector<float> y = test::poisoned(T * d), w_out = test::poisoned(T * 3);
  std::vector<int32_t> ids_out(static_cast<size_t>(T * 3), -1);
  block.run(x.data(), T, y.data(), nullptr, nullptr, ids_out.data(), w_out.data());

  MoeBlock lib;
  lib.routed.d = d;
  lib.routed.f = f;
  lib.routed.n_expert = E;
  lib.routed.gate = make_expert_tensor("g", GgmlType::Q8_0, g.bytes.data(), d, f, E);
  lib.routed.up = make_expert_tensor("u", GgmlType::Q8_0, u.bytes.data(), d, f, E);
  lib.routed.down = make_expert_tensor("d", GgmlType::Q8_0, dn.bytes.data(), f, d, E);
  lib.routed.gate_bias = gb.data();
  lib.routed.down_bias = db.data();
  lib.routed.activation.kind = ActivationKind::kSwiGLUOai;
  lib.router = router.data();
  lib.k = 3;
  lib.routing.score = ScoreFunc::kSigmoid;
  lib.routing.scale = 2.5f;
  lib.routing.n_group = 4;
  lib.routing.n_group_used = 2;
  lib.routing.selection_bias = sel_bias.data();
  SharedExpert s;
  s.ffn.d = d;
  s.ffn.f = 64;
  s.ffn.n_expert = 1;
  s.ffn.gate = make_expert_tensor("sg", GgmlType::Q8_0, sg.bytes.data(), d, 64, 1);
  s.ffn.up = make_expert_tensor("su", GgmlType::Q8_0, su.bytes.data(), d, 64, 1);
  s.ffn.down = make_expert_tensor("sd", GgmlType::Q8_0, sd.bytes.data(), 64, d, 1);
  s.gate = gate_inp.data();
  lib.shared.push_back(s);
  BlockRunner runner(lib, "cpu");
  std::vector<float> y_lib = test::poisoned(T * d);
  std::vector<int32_t> ids_lib;
  std::vector<float> w_lib;
  // Both name no profile (the C API's block above neither): the default, q10 on the CPU backend.
  RunOptions fused;
  fused.arm = Arm::kFused;
  const RunReport ran = runner.run(x.data(), T, nullptr, nullptr, 0, fused, y_lib.data(), &ids_lib, &w_lib);
  EXPECT_EQ(ran.numerics, Numerics::kQ10);
  EXPECT_EQ(ran.arm, Arm::kFused);
  EXPECT_EQ(ids_out, ids_lib);
  EXPECT_EQ(test::count_bitwise_diffs(w_out.data(), w_lib.data(), T * 3), 0);
  EXPECT_EQ(test::count_bitwise_diffs(y.data(), y_lib.data(), T * d), 0);

  // Misuse is a status and a message, never a crash.
  desc.routing.n_group = 3;  // does not divide E = 8
  strata_moe_block* bad = nullptr;
  EXPECT_EQ(strata_moe_block_create(STRATA_MOE_BACKEND_CPU, &desc, &bad),
            STRATA_MOE_INVALID_ARGUMENT);
  EXPECT_EQ(bad, nullptr);
  EXPECT_NE(std::string(strata_moe_last_error()).find("groups"), std::string::npos);
  desc.routing.n_group = 4;
  desc.activation = static_cast<strata_moe_activation>(7);
  EXPECT_EQ(strata_moe_block_create(STRATA_MOE_BACKEND_CPU, &desc, &bad),
            STRATA_MOE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(strata_moe_last_error()).find("desc.activation"), std::string::npos);
  desc.activation = STRATA_MOE_ACTIVATION_SWIGLU_OAI;
  // Biases and SwiGLU-OAI are refused on CUDA (or CUDA is absent).
  EXPECT_EQ(strata_moe_block_create(STRATA_MOE_BACKEND_CUDA, &desc, &bad), STRATA_MOE_UNSUPPORTED);
}

}  // namespace
}  // namespace strata
