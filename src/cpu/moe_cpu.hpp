// The CPU arms: production (stage by stage) and fused (per expert tile), same int8 semantics.
#pragma once
#include <cstdint>
#include <vector>

#include "pipeline/layer.hpp"
#include "pipeline/numerics.hpp"
#include "pipeline/run.hpp"

namespace strata {

// Intermediates an arm can expose for the parity tests (filled when non-null).
struct CpuDebugOutputs {
  std::vector<float> gate;  // [(t, j), f] gate pre-activation, pair (t, j) at row t*k + j
  std::vector<float> up;    // [(t, j), f]
  std::vector<float> h;     // [(t, j), f] silu(g)*u before requantisation
  std::vector<float> down;  // [(t, j), d] per-slot down rows
};

// y: [T, d]. Throws Error naming the argument for bad inputs or unsupported formats (a format
// without a wide decode under q10 is refused naming the tensor and its type). Arm::kFused runs the
// fused arm, any other arm the production one (the CPU has those two; the CPU backend chooses).
void run_layer_cpu(const MoeLayerWeights& layer, const LayerInputs& in, Arm arm, int threads,
                   float* y, CpuDebugOutputs* debug = nullptr, Numerics numerics = Numerics::kQ8);

}  // namespace strata
