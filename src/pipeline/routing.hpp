// Routing: router logits -> top-k expert ids and weights per token.
#pragma once
#include <cstdint>

namespace strata {

enum class Gating {
  kSoftmaxTopKRenorm,  // softmax over E, top-k (ties to the lower id), weights renormalised (qwen3moe)
  kSoftmaxTopK,        // softmax over E, top-k, no renormalisation
  kTopKSoftmax,        // top-k of the logits, softmax over the k (gpt-oss)
};

// router: [E, d] f32 row-major (GGUF ffn_gate_inp ne = [d, E]); x: [T, d] f32.
// ids: [T, k] int32 in descending probability; weights: [T, k] f32.
void route_tokens(const float* router, const float* x, int64_t n_tokens, int64_t d, int64_t n_expert,
                  int k, Gating gating, int32_t* ids, float* weights, int threads);

// Throws Error(kInvalidArgument) naming `ids_name`/`weights_name` for ids out of [0, E), a token
// routed twice to one expert, or weights that are NaN, infinite or negative.
void validate_routing(const int32_t* ids, const float* weights, int64_t n_tokens, int k, int64_t n_expert,
                      const char* ids_name, const char* weights_name);

}  // namespace strata
