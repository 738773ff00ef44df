// One seeded synthetic test case: a random layer, its routing and activations (seeds s, s+1, s+2).
#pragma once
#include <cstdint>
#include <vector>

#include "reference/oracle.hpp"
#include "synth/synth.hpp"

namespace strata::test {

enum class CaseRouting : int { kSkewed = 0, kUniform = 1, kSingleExpert = 2 };

struct SyntheticCase {
  synth::SyntheticLayer layer;
  synth::Routing routing;
  std::vector<float> x;  // [T, d]
  int64_t n_tokens = 0;
  int k = 0;

  // Views into this object: valid while it lives (and is not moved).
  LayerInputs inputs() const {
    return LayerInputs{x.data(), routing.ids.data(), routing.weights.data(), n_tokens, k};
  }
};

// IQ3_S gate/up, Q2_0 down (synth's defaults) at d x f x E, T tokens routed k ways.
SyntheticCase make_synthetic_case(int64_t d, int64_t f, int64_t n_expert, int k, int64_t n_tokens,
                                  CaseRouting routing, uint64_t seed);
// The same for a layer of `spec`'s geometry and formats (its seed is replaced by `seed`).
SyntheticCase make_synthetic_case(synth::LayerSpec spec, int k, int64_t n_tokens, CaseRouting routing,
                                  uint64_t seed);
// A case whose gate overflows inside the layer (synth's IQ3_S gate/up and Q2_0 down, which every
// arm carries; d 512, f 128, 4 experts, 8 tokens, k 2): x's first value is 1e36 in every token and
// its next 255 values 0; the first IQ3_S block (values 0 .. 255) of every gate and up row has d 0,
// but that of gate row `feature`, whose first weight is -65504 x 31 x a grid magnitude. Gate is then
// -inf at `feature` in every pair, and h NaN there beside finite values in the rest of its
// requantisation block.
struct OverflowCase {
  SyntheticCase c;
  int64_t feature = 0;
};
OverflowCase make_gate_overflow_case(uint64_t seed);

// The routing of a case: T tokens on k of E experts, from `seed`.
synth::Routing case_routing(CaseRouting routing, int64_t n_tokens, int64_t n_expert, int k, uint64_t seed);

}  // namespace strata::test
