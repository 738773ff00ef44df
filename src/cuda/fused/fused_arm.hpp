// The fused-sm80 CUDA arm: which layers it runs, and its gate/up step.
//
// run_layer (cuda/backend/run_layer.cu) chooses the arm once per call (the arm registry). On it, the
// gate/up GEMMs and the SwiGLU/requant kernel of the production arm are replaced by one fused
// kernel writing the same h codes, scales and half sums; quantisation, grouping, the down GEMM and
// the ordered combine are shared with the production arm, so the layer output is bitwise equal.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/device_buffer.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "formats/all.hpp"
#include "pipeline/layer.hpp"

namespace strata::cuda::fused {

// Gate/up formats the fused kernel carries (one gate_up_<format>.cu each). Down runs on the
// production grouped GEMM, so any format the production arm carries is fine there.
using FusedGateUpFormats = FormatList<Iq3S>;

// True when gate and up share one format of FusedGateUpFormats and the production arm carries down.
bool fused_supports(const MoeLayerWeights& layer);

struct GateUpOutputs {
  int8_t* h_codes = nullptr;       // [P, f] int8, sorted-pair rows
  float* h_scales = nullptr;       // [P, f/32] f32
  int32_t* h_half_sums = nullptr;  // [P, f/16] int32
  float* h = nullptr;              // [P, f] f32 before requantisation, or null (tests)
  float* gate = nullptr;           // [P, f] f32 gate pre-activation, or null (tests)
  float* up = nullptr;             // [P, f] f32 up pre-activation, or null (tests)
};

// Gate/up + SwiGLU + requant of every sorted pair. x_codes/x_scales: [T, d] / [T, d/32] from the
// shared quantisation step; grouping: the device tables (expert offsets, pair tokens); n_pairs = T*k.
// tile_offsets is grown to E + 1 and rebuilt for the fused tile chosen from the mean pairs per expert.
void run_gate_up(const MoeLayerWeights& layer, const int8_t* x_codes, const float* x_scales,
                 const DeviceGroupingTables& grouping, int64_t n_pairs, DeviceBuffer<int32_t>& tile_offsets,
                 const GateUpOutputs& out, cudaStream_t stream);

}  // namespace strata::cuda::fused
