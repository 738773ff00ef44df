// The two products the wmma chain kernel runs, as policy types:
//   GateUpOp: gate and up rows of the same h features in one item (gate rows first, then up),
//             epilogue SwiGLU + requantise h per 32 features -> h codes, scales, half sums;
//   DownOp:   down rows against the requantised h, epilogue one fp32 row per sorted pair.
#pragma once

namespace strata::cuda::fused_wmma {

struct GateUpOp {
  static constexpr int kTensors = 2;  // gate, up
  static constexpr bool kSwiglu = true;
  static constexpr const char* kName = "wmma_gate_up";
};

struct DownOp {
  static constexpr int kTensors = 1;
  static constexpr bool kSwiglu = false;
  static constexpr const char* kName = "wmma_down";
};

// Output columns (h features, or down rows) one work item covers.
template <class Op, class Tile>
inline constexpr int kItemColumns = Tile::kWeightRows / Op::kTensors;

}  // namespace strata::cuda::fused_wmma
