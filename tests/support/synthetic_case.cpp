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

OverflowCase make_gate_overflow_case(uint64_t seed) {
  synth::LayerSpec spec;
  spec.d = 256;
  spec.f = 128;
  spec.n_expert = 4;
  spec.gate_type = spec.up_type = spec.down_type = GgmlType::Q8_0;
  OverflowCase o;
  o.c = make_synthetic_case(spec, 2, 8, CaseRouting::kUniform, seed);
  o.feature = static_cast<int64_t>(synth::Rng(seed + 3).next() % static_cast<uint64_t>(spec.f));
  constexpr int kBlockBytes = 34;  // Q8_0: f16 d, then 32 int8 codes
  // The first block (x values 0 .. 31) of a row: d, and the code of x's first value alone.
  const auto set_first_block = [](const ExpertTensor& t, int64_t e, int64_t row, uint16_t d_bits,
                                  int8_t code0) {
    auto* block = const_cast<uint8_t*>(t.row(e, row));
    block[0] = static_cast<uint8_t>(d_bits & 0xFF);
    block[1] = static_cast<uint8_t>(d_bits >> 8);
    block[2] = static_cast<uint8_t>(code0);
    for (int i = 3; i < kBlockBytes; ++i) block[i] = 0;
  };
  const MoeLayerWeights& w = o.c.layer.weights;
  for (int64_t e = 0; e < spec.n_expert; ++e)
    for (int64_t j = 0; j < spec.f; ++j) {
      const bool hot = j == o.feature;
      set_first_block(w.gate, e, j, hot ? 0x7BFF : 0x3C00, hot ? -127 : 0);  // 65504 or 1
      set_first_block(w.up, e, j, 0x3C00, hot ? 1 : 0);
    }
  for (int64_t t = 0; t < o.c.n_tokens; ++t) {
    float* row = o.c.x.data() + t * spec.d;
    row[0] = 1e36f;
    for (int i = 1; i < 64; ++i) row[i] = 0.0f;
  }
  return o;
}

}  // namespace strata::test
