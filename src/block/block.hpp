// One whole MoE block of a real model: routing, the routed expert layer and shared experts,
// composed over one LayerBackend per expert layer.
//
//   y[t] = fma chain over  w[t, 0] * routed_0(x[t]), ..., w[t, k-1] * routed_{k-1}(x[t]),
//          then s_0[t] * shared_0(x[t]), ..., s_{n-1}[t] * shared_{n-1}(x[t])
//
// NOTE: the shared experts have a fixed place in the combine order, after the k routed slots,
// each one more fmaf on the routed sum, so a block's bits are the same on every arm and
// backend that computes its expert layers bit for bit the same.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/backend.hpp"
#include "pipeline/layer.hpp"
#include "pipeline/routing.hpp"

namespace strata {

// A dense SwiGLU FFN every token visits (ffn_{gate,up,down}_shexp), as an E = 1 expert layer.
struct SharedExpert {
  MoeLayerWeights ffn;          // n_expert = 1, plain SwiGLU
  const float* gate = nullptr;  // [d] f32: output scaled by sigmoid(gate . x) (qwen3next,
                                // qwen35moe); null: added unscaled (deepseek2, glm4moe)
  std::string gate_name;        // for messages
};

struct MoeBlock {
  MoeLayerWeights routed;         // biases and activation included
  const float* router = nullptr;  // [E, d] f32 row-major; null: the caller passes ids/weights
  RoutingSpec routing;
  int k = 0;  // experts per token
  std::vector<SharedExpert> shared;
};

// Throws Error naming the part (routing, shared expert, router) that cannot form a block.
void validate_block(const MoeBlock& block);

// Runs a block on host memory: each expert layer on the backend named "cpu" or "cuda" (the CUDA
// backend copies the weights to the device once). The router, shared-expert gates and the final
// combine run on the host.
class BlockRunner {
 public:
  BlockRunner(const MoeBlock& block, std::string_view backend);
  const char* backend_name() const { return routed_->name(); }
  const MoeBlock& block() const { return block_; }

  // x: [T, d]. ids/weights: [T, k_ids] from the caller, or both null to route with the block's
  // router (k = block().k). y: [T, d]. ids_used/weights_used (optional) receive the routing used.
  // Returns what ran for the routed experts; each shared expert runs in the same profile.
  RunReport run(const float* x, int64_t n_tokens, const int32_t* ids, const float* weights, int k_ids,
                const RunOptions& options, float* y, std::vector<int32_t>* ids_used = nullptr,
                std::vector<float>* weights_used = nullptr);

 private:
  // y += each shared expert's output (sigmoid-gated where the block says), in the profile the
  // routed experts ran in.
  void add_shared_experts(const float* x, int64_t n_tokens, const RunOptions& options,
                          Numerics numerics, float* y);

  MoeBlock block_;
  std::unique_ptr<LayerBackend> routed_;
  std::vector<std::unique_ptr<LayerBackend>> shared_;
};

}  // namespace strata
