// The double-precision oracles every arm is checked against.
#pragma once
#include <cstdint>
#include <vector>

#include "pipeline/layer.hpp"
#include "pipeline/numerics.hpp"
#include "pipeline/run.hpp"

namespace strata {

struct OracleOutput {
  std::vector<double> gate;   // [T*k pairs in (t, j) order, f]: x.Wg before SwiGLU
  std::vector<double> up;     // [T*k, f]
  std::vector<double> h;      // [T*k, f]: silu(g)*u (before requantisation)
  std::vector<double> y;      // [T, d]
};

// Exact: double precision on the decoded weights and the unquantised x and h.
OracleOutput exact_oracle(const MoeLayerWeights& layer, const LayerInputs& in, int threads);

// Same-quantisation: double precision on the profile's activation codes and scales of x (q8:
// arith.hpp, q10: arith_q10.hpp), the weights' codes and scales in that profile (q8: decode_sub,
// q10: decode_wide), h computed in double then requantised by the same rule, the down product
// in double on those codes.
// arm_h (optional, [T*k pairs in (t, j) order, f] fp32): an arm's h before requantisation. When
// given, the down product is fed arm_h requantised by the same rule instead of (float) of the
// oracle's own h -- "the same requantised h" of DESIGN.md. A code that flips at a rounding
// boundary between the fp32 and the double h then does not count against the down product;
// the arm's h itself is still checked against OracleOutput::h.
OracleOutput same_quant_oracle(const MoeLayerWeights& layer, const LayerInputs& in, int threads,
                               const float* arm_h = nullptr, Numerics numerics = Numerics::kQ8);

}  // namespace strata
