// Routing: router logits -> top-k expert ids and weights per token, as llama.cpp's
// build_moe_ffn computes them for each architecture.
#pragma once
#include <cstdint>
#include <string>

namespace strata {

// How router logits become expert scores ({arch}.expert_gating_func).
enum class ScoreFunc {
  kSoftmax,          // softmax over E (gating func 1)
  kSigmoid,          // sigmoid per expert (gating func 2; DeepSeek V3, GLM-4.5)
  kSoftmaxSelected,  // scores are the logits; weights = softmax over the k chosen (3; gpt-oss)
};

// One routing rule. Steps, per token (llama.cpp's order):
//   l = router . x (+ logit_bias); s = score(l); sel = s (+ selection_bias);
//   groups: keep the n_group_used groups with the largest sum of their top-2 sel, mask the rest;
//   ids = top-k of sel (ties to the lower id); w = s[ids] (softmax over them for
//   kSoftmaxSelected); normalize: w / max(sum w, 2^-14); w * scale when scale != 1.
struct RoutingSpec {
  ScoreFunc score = ScoreFunc::kSoftmax;
  bool normalize = true;                  // {arch}.expert_weights_norm
  float scale = 1.0f;                     // {arch}.expert_weights_scale (0 or 1: none)
  int n_group = 1;                        // {arch}.expert_group_count (E / n_group per group)
  int n_group_used = 1;                   // {arch}.expert_group_used_count
  const float* logit_bias = nullptr;      // [E] ffn_gate_inp.bias (gpt-oss)
  const float* selection_bias = nullptr;  // [E] exp_probs_b: changes the choice, not the weights
};

enum class Gating {
  kSoftmaxTopKRenorm,  // softmax over E, top-k (ties to the lower id), weights renormalised (qwen3moe)
  kSoftmaxTopK,        // softmax over E, top-k, no renormalisation
  kTopKSoftmax,        // top-k of the logits, softmax over the k (gpt-oss)
};
RoutingSpec routing_spec(Gating gating);

// One line for messages and `info`: "sigmoid, top-8 of 256 in 4 of 8 groups, normalised, x2.5".
std::string describe_routing(const RoutingSpec& spec, int k, int64_t n_expert);

// Throws Error(kInvalidArgument) naming the field when the rule cannot route E experts k ways
// (groups not dividing E, fewer than 2 experts per group, k above the kept groups' experts,
// a scale that is not finite and positive).
void validate_routing_spec(const RoutingSpec& spec, int64_t n_expert, int k);

// router: [E, d] f32 row-major (GGUF ffn_gate_inp ne = [d, E]); x: [T, d] f32.
// ids: [T, k] int32 in descending selection score; weights: [T, k] f32.
void route_tokens(const float* router, const float* x, int64_t n_tokens, int64_t d, int64_t n_expert,
                  int k, const RoutingSpec& spec, int32_t* ids, float* weights, int threads);
void route_tokens(const float* router, const float* x, int64_t n_tokens, int64_t d, int64_t n_expert,
                  int k, Gating gating, int32_t* ids, float* weights, int threads);

// scale[t] = sigmoid(gate . x[t]) (qwen3next / qwen35moe shared-expert gate), gate: [d] f32,
// the dot in the router's fixed order.
void sigmoid_gate(const float* gate, const float* x, int64_t n_tokens, int64_t d, float* scale,
                  int threads);

// Throws Error(kInvalidArgument) naming `ids_name`/`weights_name` for ids out of [0, E), a token
// routed twice to one expert, or weights that are NaN, infinite or negative.
void validate_routing(const int32_t* ids, const float* weights, int64_t n_tokens, int k, int64_t n_expert,
                      const char* ids_name, const char* weights_name);

}  // namespace strata
