#include "block/block.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/finite.hpp"

namespace strata {

void validate_block(const MoeBlock& block) {
  validate_layer(block.routed);
  require(
      block.k >= 1 && block.k <= block.routed.n_expert && block.k <= 64, Status::kInvalidArgument,
      fmt::format("block: k = {} must be in [1, min(E = {}, 64)]", block.k, block.routed.n_expert));
  validate_routing_spec(block.routing, block.routed.n_expert, block.k);
  for (size_t i = 0; i < block.shared.size(); ++i) {
    const SharedExpert& s = block.shared[i];
    validate_layer(s.ffn);
    require(s.ffn.n_expert == 1 && s.ffn.d == block.routed.d, Status::kInvalidArgument,
            fmt::format("shared expert {} ('{}'): must be one expert of width d = {}", i,
                        s.ffn.gate.name, block.routed.d));
    require(s.ffn.is_plain(), Status::kUnsupported,
            fmt::format("shared expert {} ('{}'): biases or a non-SwiGLU activation", i,
                        s.ffn.gate.name));
  }
}

BlockRunner::BlockRunner(const MoeBlock& block, std::string_view backend) : block_(block) {
  validate_block(block_);
  routed_ = make_host_memory_backend(backend, block_.routed);
  for (const SharedExpert& s : block_.shared)
    shared_.push_back(make_host_memory_backend(backend, s.ffn));
}

RunReport BlockRunner::run(const float* x, int64_t n_tokens, const int32_t* ids, const float* weights,
                           int k_ids, const RunOptions& options, float* y,
                      std::vector<int32_t>* ids_used, std::vector<float>* weights_used) {
  require(x != nullptr && y != nullptr, Status::kInvalidArgument, "x, y: null pointer");
  require(n_tokens >= 1, Status::kInvalidArgument,
          fmt::format("n_tokens: {} (must be >= 1)", n_tokens));
  require((ids == nullptr) == (weights == nullptr), Status::kInvalidArgument,
          "ids and weights: give both or neither");
  const int64_t d = block_.routed.d;
  const int k = ids != nullptr ? k_ids : block_.k;
  std::vector<int32_t> routed_ids;
  std::vector<float> routed_weights;
  if (ids == nullptr) {
    require(block_.router != nullptr, Status::kInvalidArgument,
            "ids: the block has no router, so ids and weights are required");
    routed_ids.resize(static_cast<size_t>(n_tokens * k));
    routed_weights.resize(routed_ids.size());
    route_tokens(block_.router, x, n_tokens, d, block_.routed.n_expert, k, block_.routing,
                 routed_ids.data(), routed_weights.data(), options.threads);
    if (const int64_t i = first_non_finite(routed_weights.data(), n_tokens * k); i >= 0)
      fail(Status::kInvalidArgument,
           fmt::format("router: token {}: the routing weights overflow float32 (x too large in "
                       "magnitude for the router)",
                       i / k));
    ids = routed_ids.data();
    weights = routed_weights.data();
  }
  const RunReport ran = routed_->run(LayerInputs{x, ids, weights, n_tokens, k}, options, y);
  if (ids_used != nullptr) ids_used->assign(ids, ids + n_tokens * k);
  if (weights_used != nullptr) weights_used->assign(weights, weights + n_tokens * k);
  if (!shared_.empty()) add_shared_experts(x, n_tokens, options, ran.numerics, y);
  require_finite_result(y, n_tokens, d);
  return ran;
}

void BlockRunner::add_shared_experts(const float* x, int64_t n_tokens, const RunOptions& options,
                                     Numerics numerics, float* y) {
  const int64_t d = block_.routed.d;
  // Each shared expert as an E = 1, k = 1 layer with weight 1: its rows are its down output.
  const std::vector<int32_t> zero_ids(static_cast<size_t>(n_tokens), 0);
  const std::vector<float> unit_weights(static_cast<size_t>(n_tokens), 1.0f);
  std::vector<float> shared_y(static_cast<size_t>(n_tokens * d));
  std::vector<float> scale(static_cast<size_t>(n_tokens), 1.0f);
  for (size_t i = 0; i < shared_.size(); ++i) {
    const SharedExpert& s = block_.shared[i];
    // The shared experts in the routed experts' profile: one block, one arithmetic contract.
    RunOptions shared_options = options;
    shared_options.numerics = numerics;
    shared_[i]->run(LayerInputs{x, zero_ids.data(), unit_weights.data(), n_tokens, 1}, shared_options,
                    shared_y.data());
    if (s.gate != nullptr)
      sigmoid_gate(s.gate, x, n_tokens, d, scale.data(), options.threads);
    else
      std::fill(scale.begin(), scale.end(), 1.0f);
    for (int64_t t = 0; t < n_tokens; ++t)
      for (int64_t c = 0; c < d; ++c)
        y[t * d + c] = combine_step(y[t * d + c], scale[t], shared_y[t * d + c]);
  }
}

}  // namespace strata
