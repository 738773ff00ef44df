// The fused-hopper arm (sm_90a): the fused arm's products on bulk copies and wgmma int8.
//
// run_layer (cuda/backend/run_layer.cu) chooses the arm once per call (the arm registry): a fused
// request takes this arm on an sm_90 device when the build includes 90a and the layer's formats
// and geometry are covered, else the sm_80 fused kernels. Quantisation, grouping and the ordered
// combine are shared with the other arms, so the layer output is bitwise equal.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/device_buffer.hpp"
#include "cuda/fused/fused_arm.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "formats/all.hpp"
#include "pipeline/layer.hpp"

namespace strata::cuda::fused_hopper {

// Gate/up and down formats the kernels carry (one .cu each).
using HopperGateUpFormats = FormatList<Iq3S>;
using HopperDownFormats = FormatList<Q2_0>;

// True when gate and up share one covered format (d % 256 == 0), and down is covered (f % 64 == 0).
bool hopper_supports(const MoeLayerWeights& layer);

// Whether the arm's down product runs on its own wgmma kernel (STRATA_PF_HOPPER_DOWN=1) or on the
// production grouped GEMM (the default: measured faster on the H200, see bench/results). The bits
// are the same either way.
bool hopper_down_kernel();

// Whether this device and build run the arm's kernels at all (no notice).
bool hopper_available();

// Gate/up + SwiGLU + requant of every sorted pair (outputs as the sm_80 fused kernel's).
// tile_offsets is grown to E + 1 and rebuilt for the tile chosen from the mean pairs per expert;
// run_down() reuses it.
void run_gate_up(const MoeLayerWeights& layer, const int8_t* x_codes, const float* x_scales,
                 const DeviceGroupingTables& grouping, int64_t n_pairs,
                 DeviceBuffer<int32_t>& tile_offsets, const fused::GateUpOutputs& out, cudaStream_t stream);

// The down product of the h rows run_gate_up() wrote, into down_rows ([P, d] f32, sorted-pair rows).
void run_down(const MoeLayerWeights& layer, const fused::GateUpOutputs& h, const DeviceGroupingTables& grouping,
              int64_t n_pairs, const DeviceBuffer<int32_t>& tile_offsets, float* down_rows, cudaStream_t stream);

}  // namespace strata::cuda::fused_hopper
