#include "synthetic_case.hpp"

#include "formats/iq3_s.hpp"

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

OverflowCase make_gate_overflow_case(uint64_t seed) {
  synth::LayerSpec spec;
  spec.d = 512;
  spec.f = 128;
  spec.n_expert = 4;
  OverflowCase o;
  o.c = make_synthetic_case(spec, 2, 8, CaseRouting::kUniform, seed);
  o.feature = static_cast<int64_t>(synth::Rng(seed + 3).next() % static_cast<uint64_t>(spec.f));
  const MoeLayerWeights& w = o.c.layer.weights;
  for (int64_t e = 0; e < spec.n_expert; ++e)
    for (int64_t j = 0; j < spec.f; ++j)
      for (const ExpertTensor* t : {&w.gate, &w.up}) {
        auto* block = const_cast<uint8_t*>(t->row(e, j));  // IQ3_S: f16 d first
        const bool hot = t == &w.gate && j == o.feature;
        block[0] = hot ? 0xFF : 0x00;  // d = 65504 (0x7BFF) or 0
        block[1] = hot ? 0x7B : 0x00;
        if (hot) {
          block[Iq3S::kScalesOffset] |= 0x0F;  // sub-block 0's multiplier 31
          block[Iq3S::kSignsOffset] |= 0x01;   // value 0 negative
        }
      }
  for (int64_t t = 0; t < o.c.n_tokens; ++t) {
    float* row = o.c.x.data() + t * spec.d;
    row[0] = 1e36f;
    for (int i = 1; i < 256; ++i) row[i] = 0.0f;
  }
  return o;
}

}  // namespace strata::test
