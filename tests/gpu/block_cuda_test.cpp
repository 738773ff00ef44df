// Whole MoE blocks on the CUDA backend: a qwen35moe-like block (softmax routing, a shared expert
// scaled by sigmoid(x . gate)) and a deepseek2-like one (sigmoid scores, a selection bias, grouped
// top-k, weight scale, an unscaled shared expert), IQ3_S gate/up and Q2_0 down, bitwise equal to
// the CPU backend in each profile and arm, and a block the CUDA arms do not compute (per-expert
// biases) refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "block/block.hpp"
#include "gpu_test_util.hpp"
#include "moe_check.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

struct BlockParts {
  synth::SyntheticLayer routed, shared;
  std::vector<float> router, shared_gate, selection_bias, bias;
};

BlockParts make_parts(int64_t d, int64_t f, int64_t n_expert, int64_t f_shared, uint64_t seed) {
  BlockParts p;
  synth::LayerSpec spec;
  spec.d = d;
  spec.f = f;
  spec.n_expert = n_expert;
  spec.seed = seed;
  p.routed = synth::make_layer(spec);
  synth::LayerSpec shared = spec;
  shared.f = f_shared;
  shared.n_expert = 1;
  shared.seed = seed + 7;
  p.shared = synth::make_layer(shared);
  synth::Rng rng(seed + 11);
  p.router.resize(static_cast<size_t>(n_expert * d));
  for (float& v : p.router) v = static_cast<float>(0.05 * rng.normal());
  p.shared_gate.resize(static_cast<size_t>(d));
  for (float& v : p.shared_gate) v = static_cast<float>(0.05 * rng.normal());
  p.selection_bias.resize(static_cast<size_t>(n_expert));
  for (float& v : p.selection_bias) v = static_cast<float>(0.1 * rng.normal());
  p.bias.resize(static_cast<size_t>(n_expert * f));
  for (float& v : p.bias) v = static_cast<float>(0.01 * rng.normal());
  return p;
}

MoeBlock qwen35_like(const BlockParts& p, int k) {
  MoeBlock b;
  b.routed = p.routed.weights;
  b.router = p.router.data();
  b.k = k;
  SharedExpert s;
  s.ffn = p.shared.weights;
  s.gate = p.shared_gate.data();
  s.gate_name = "blk.0.ffn_gate_inp_shexp.weight";
  b.shared.push_back(s);
  return b;
}

MoeBlock deepseek_like(const BlockParts& p, int k) {
  MoeBlock b = qwen35_like(p, k);
  b.shared[0].gate = nullptr;  // added unscaled
  b.routing.score = ScoreFunc::kSigmoid;
  b.routing.selection_bias = p.selection_bias.data();
  b.routing.n_group = 4;
  b.routing.n_group_used = 2;
  b.routing.normalize = true;
  b.routing.scale = 2.5f;
  return b;
}

void expect_backends_agree(const MoeBlock& block, int64_t n_tokens, uint64_t seed, const char* label) {
  SCOPED_TRACE(std::string(label) + " seed " + std::to_string(seed));
  const int64_t d = block.routed.d;
  const std::vector<float> x = synth::random_activations(n_tokens, d, seed + 3);
  BlockRunner cpu(block, "cpu"), cuda(block, "cuda");
  for (Numerics numerics : {Numerics::kQ8, Numerics::kQ10}) {
    for (Arm arm : {Arm::kProduction, Arm::kFused}) {
      SCOPED_TRACE(std::string(numerics_name(numerics)) + (arm == Arm::kFused ? " fused" : " production"));
      RunOptions options;
      options.numerics = numerics;
      options.arm = arm;
      std::vector<float> y_cpu = test::poisoned(n_tokens * d), y_cuda = test::poisoned(n_tokens * d);
      std::vector<int32_t> ids_cpu, ids_cuda;
      std::vector<float> w_cpu, w_cuda;
      cpu.run(x.data(), n_tokens, nullptr, nullptr, block.k, options, y_cpu.data(), &ids_cpu, &w_cpu);
      const RunReport ran =
          cuda.run(x.data(), n_tokens, nullptr, nullptr, block.k, options, y_cuda.data(), &ids_cuda, &w_cuda);
      EXPECT_EQ(ran.numerics, numerics) << "the report names the profile that ran";
      EXPECT_EQ(ids_cpu, ids_cuda) << "routing";
      EXPECT_EQ(test::count_bitwise_diffs(w_cpu.data(), w_cuda.data(), static_cast<int64_t>(w_cpu.size())), 0);
      EXPECT_EQ(test::count_bitwise_diffs(y_cpu.data(), y_cuda.data(), n_tokens * d), 0) << "y";
      double energy = 0.0;
      for (float v : y_cuda) energy += std::abs(v);
      EXPECT_GT(energy, 0.0);
    }
  }
}

TEST(CudaBlocks, Qwen35LikeBlockEqualsTheCpuBackend) {
  STRATA_REQUIRE_GPU();
  const uint64_t seed = test::fresh_seed("cuda_block_qwen35");
  const BlockParts p = make_parts(256, 128, 16, 192, seed);
  expect_backends_agree(qwen35_like(p, 4), 37, seed, "qwen35-like");
}

TEST(CudaBlocks, DeepseekLikeBlockEqualsTheCpuBackend) {
  STRATA_REQUIRE_GPU();
  const uint64_t seed = test::fresh_seed("cuda_block_deepseek");
  const BlockParts p = make_parts(512, 128, 32, 256, seed);
  expect_backends_agree(deepseek_like(p, 6), 29, seed, "deepseek-like");
}

TEST(CudaBlocks, BiasedExpertsAreRefusedNamingThePart) {
  STRATA_REQUIRE_GPU();
  const BlockParts p = make_parts(256, 128, 8, 128, test::fresh_seed("cuda_block_bias"));
  MoeBlock b = qwen35_like(p, 2);
  b.routed.gate_bias = p.bias.data();
  try {
    BlockRunner cuda(b, "cuda");
    const std::vector<float> x = synth::random_activations(3, 256, 1);
    std::vector<float> y(3 * 256);
    cuda.run(x.data(), 3, nullptr, nullptr, 2, RunOptions{}, y.data());
    FAIL() << "a biased block ran on the CUDA backend";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("bias"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
