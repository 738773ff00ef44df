// Independent double-precision model of whole MoE blocks for the block tests, and seeded GGUF
// files laid out like each architecture's. Written apart from the library's code path: its own
// Q8_0 decode, its own routing and activations; it shares only the activation quantisation
// rule (re-implemented here), which the same-quantisation comparison is defined by.
#pragma once
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace strata::test {

// A stacked Q8_0 tensor [in, out, experts] of random codes and fp16 scales.
struct Q8Weights {
  int64_t in = 0, out = 0, experts = 0;
  std::vector<uint8_t> bytes;  // ggml Q8_0 blocks: fp16 scale + 32 int8 codes
  double value(int64_t e, int64_t r, int64_t c) const;
  std::vector<uint8_t> expert_bytes(int64_t e) const;  // one expert's rows
};
Q8Weights random_q8(int64_t in, int64_t out, int64_t experts, std::mt19937_64& rng);

// Reference gating and activation choices (spelled out, not the library's enums).
enum class RefScore { kSoftmax, kSigmoid, kSoftmaxSelected };

struct RefBlock {
  int64_t d = 0, f = 0, n_expert = 0;
  int k = 0;
  Q8Weights gate, up, down;                           // gate/up [d, f, E], down [f, d, E]
  std::vector<double> gate_bias, up_bias, down_bias;  // [E, f], [E, f], [E, d] or empty
  bool oai = false;                                   // SwiGLU-OAI (alpha 1.702, limit 7)
  std::vector<float> router;                          // [E, d] or empty
  std::vector<float> router_bias, selection_bias;     // [E] or empty
  RefScore score = RefScore::kSoftmax;
  bool normalize = true;
  double scale = 1.0;
  int groups = 1, groups_used = 1;
  struct Shared {
    Q8Weights gate, up, down;     // [d, fs, 1], [d, fs, 1], [fs, d, 1]
    std::vector<float> gate_inp;  // [d] or empty (unscaled)
  };
  std::vector<Shared> shared;
};

// Per token: reference selection scores (-inf where a group is masked) and weights for the
// given ids. check_routing asserts (gtest) that `ids` is a top-k of the reference scores
// within `eps` and that `weights` match the reference weights for those ids.
void check_routing(const RefBlock& b, const float* x, int64_t n_tokens, const int32_t* ids,
                   const float* weights, double eps);
std::vector<double> reference_weights(const RefBlock& b, const float* x, int64_t n_tokens,
                                      const int32_t* ids);

// Same-quantisation model of one expert FFN for one token: x quantised by the int8 rule; h in
// double, then the down product fed `arm_h` (the arm's fp32 h) requantised by the same rule.
struct RefExpertOut {
  std::vector<double> gate, up, h, down;
};
RefExpertOut reference_expert(const Q8Weights& gate, const Q8Weights& up, const Q8Weights& down,
                              int64_t e, const std::vector<double>* gate_bias,
                              const std::vector<double>* up_bias,
                              const std::vector<double>* down_bias, bool oai, const float* x,
                              const float* arm_h);

// y of the whole block in double given routing (ids, weights) and each expert's arm h:
// routed_h [T*k, f] in (t, j) order, shared_h[i] [T, fs_i].
std::vector<double> reference_block(const RefBlock& b, const float* x, int64_t n_tokens,
                                    const int32_t* ids, const std::vector<double>& weights,
                                    const std::vector<float>& routed_h,
                                    const std::vector<std::vector<float>>& shared_h);

std::vector<float> random_floats(size_t n, double stddev, std::mt19937_64& rng);

}  // namespace strata::test
