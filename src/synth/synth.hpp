// Synthetic MoE layers, routings and activations from a seed: the demo, the tests, the bench
// harness and the GPU tests all build their inputs here, so a seed names one case everywhere.
//
// Weights are random bytes with the scale fields set to a calibrated range (layer output RMS
// about 1). Supported formats (synth_supports): every format whose scales are f16 fields at
// known offsets — Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q1_0, Q2_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, TQ1_0,
// TQ2_0, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ4_NL, IQ4_XS — plus MXFP4 (E8M0 byte),
// NVFP4 (UE4M3 bytes) and IQ1_M (f16 assembled from nibbles). Others throw kUnsupported.
#pragma once
#include <cstdint>
#include <vector>

#include "formats/ggml_type.hpp"
#include "pipeline/layer.hpp"

namespace strata::synth {

bool synth_supports(GgmlType type);

// n_expert matrices [out_features, in_features] of random valid blocks; values with RMS about
// `target_rms`. Deterministic in `seed` (and independent of the thread count).
std::vector<uint8_t> random_expert_tensor(GgmlType type, int64_t in_features, int64_t out_features,
                                          int64_t n_expert, double target_rms, uint64_t seed);

// Bytes of one stacked tensor of `type` [in_features, out_features, n_expert]. Throws
// Error(kInvalidArgument) naming the shape when a dimension is outside the limits of
// common/limits.hpp, the rows do not fit the format's blocks, or the bytes exceed
// limits::kMaxSyntheticWeightBytes: the generator never sizes a buffer from an overflowed product.
uint64_t expert_tensor_bytes(GgmlType type, int64_t in_features, int64_t out_features,
                             int64_t n_expert);
// Bytes of a layer's gate, up and down tensors (checked as above, and their sum).
uint64_t layer_bytes(int64_t d, int64_t f, int64_t n_expert, GgmlType gate_up_type,
                     GgmlType down_type);

struct LayerSpec {
  int64_t d = 2048, f = 512, n_expert = 256;
  GgmlType gate_type = GgmlType::IQ3_S, up_type = GgmlType::IQ3_S, down_type = GgmlType::Q2_0;
  uint64_t seed = 1;
};

// Owns the bytes its MoeLayerWeights points into. NOTE: each tensor starts 2 bytes into its
// buffer, so every consumer is exercised on 2-byte (not 4-byte) aligned weights, as in GGUF.
struct SyntheticLayer {
  std::vector<uint8_t> gate_bytes, up_bytes, down_bytes;
  MoeLayerWeights weights;

  SyntheticLayer() = default;
  SyntheticLayer(const SyntheticLayer&) = delete;
  SyntheticLayer& operator=(const SyntheticLayer&) = delete;
  SyntheticLayer(SyntheticLayer&&) =
      default;  // vector moves keep the buffers (and the views) valid
  SyntheticLayer& operator=(SyntheticLayer&&) = default;
};

SyntheticLayer make_layer(const LayerSpec& spec);

struct Routing {
  int k = 0;
  std::vector<int32_t> ids;    // [T, k] distinct per token
  std::vector<float> weights;  // [T, k] positive, summing to 1 per token, descending
};

// Zipf-like expert popularity (exponent ~1.1, random ranks) with about a tenth of the experts
// never chosen (kept >= k chosen experts), k distinct experts per token.
Routing skewed_routing(int64_t n_tokens, int64_t n_expert, int k, uint64_t seed);
// Every expert equally likely.
Routing uniform_routing(int64_t n_tokens, int64_t n_expert, int k, uint64_t seed);
// Every token to the same k experts 0..k-1 (one expert takes every token).
Routing single_expert_routing(int64_t n_tokens, int64_t n_expert, int k, uint64_t seed);

// [T, d]: lognormal per-channel scales x Student-t(5)-like values, 4 sign-consistent outlier
// channels of magnitude 6..20. Never all zero.
std::vector<float> random_activations(int64_t n_tokens, int64_t d, uint64_t seed);

// Small counter-based generator (splitmix64): fast, seedable per expert or per token.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal();

 private:
  uint64_t state_;
};

// IEEE binary16 bits of v, round to nearest even (for writing f16 scale fields).
uint16_t float_to_fp16_bits(float v);

}  // namespace strata::synth
