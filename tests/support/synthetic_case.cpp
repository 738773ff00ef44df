#include "synthetic_case.hpp"

namespace strata::test {

synth::Routing case_routing(CaseRouting routing, int64_t n_tokens, int64_t n_expert, int k, uint64_t seed) {
  switch (routing) {
    case CaseRouting::kSkewed: return synth::skewed_routing(n_tokens, n_expert, k, seed);
    case CaseRouting::kUniform: return synth::uniform_routing(n_tokens, n_expert, k, seed);
    case CaseRouting::kSingleExpert: break;
  }
  return synth::single_expert_routing(n_tokens, n_expert, k, seed);
}

SyntheticCase make_synthetic_case(synth::LayerSpec spec, int k, int64_t n_tokens, CaseRouting routing,
                                  uint64_t seed) {
  spec.seed = seed;
  SyntheticCase c;
  c.layer = synth::make_layer(spec);
  c.routing = case_routing(routing, n_tokens, spec.n_expert, k, seed + 1);
  c.x = synth::random_activations(n_tokens, spec.d, seed + 2);
  c.n_tokens = n_tokens;
  c.k = k;
  return c;
}

SyntheticCase make_synthetic_case(int64_t d, int64_t f, int64_t n_expert, int k, int64_t n_tokens,
                                  CaseRouting routing, uint64_t seed) {
  synth::LayerSpec spec;
  spec.d = d;
  spec.f = f;
  spec.n_expert = n_expert;
  return make_synthetic_case(spec, k, n_tokens, routing, seed);
}

}  // namespace strata::test
