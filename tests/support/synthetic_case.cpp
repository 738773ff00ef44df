#include "synthetic_case.hpp"

namespace strata::test {

SyntheticCase make_synthetic_case(int64_t d, int64_t f, int64_t n_expert, int k, int64_t n_tokens,
                                  CaseRouting routing, uint64_t seed) {
  synth::LayerSpec spec;
  spec.d = d;
  spec.f = f;
  spec.n_expert = n_expert;
  spec.seed = seed;
  SyntheticCase c;
  c.layer = synth::make_layer(spec);
  switch (routing) {
    case CaseRouting::kSkewed: c.routing = synth::skewed_routing(n_tokens, n_expert, k, seed + 1); break;
    case CaseRouting::kUniform: c.routing = synth::uniform_routing(n_tokens, n_expert, k, seed + 1); break;
    case CaseRouting::kSingleExpert:
      c.routing = synth::single_expert_routing(n_tokens, n_expert, k, seed + 1);
      break;
  }
  c.x = synth::random_activations(n_tokens, d, seed + 2);
  c.n_tokens = n_tokens;
  c.k = k;
  return c;
}

}  // namespace strata::test
