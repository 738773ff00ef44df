// The fused-wmma CUDA arm (Arm::kFusedWmma): gate/up + SwiGLU + requant
// and the down product on the 16x16x16 int8 tile primitive (mma_tile_16), between the shared
// quantisation / grouping steps and the shared ordered combine.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/device_buffer.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "formats/all.hpp"
#include "pipeline/layer.hpp"

namespace strata::cuda::fused_wmma {

// Formats the chain kernels carry (one gate_up_<format>.cu / down_<format>.cu each).
using WmmaGateUpFormats = FormatList<Iq3S>;
using WmmaDownFormats = FormatList<Q2_0>;

// Gate and up share one format of WmmaGateUpFormats, down is in WmmaDownFormats, d % 32 == 0,
// f % 32 == 0.
bool wmma_supports(const MoeLayerWeights& layer);

struct ProductOutputs {
  int8_t* h_codes = nullptr;       // [P, f] int8, sorted-pair rows
  float* h_scales = nullptr;       // [P, f/32] f32
  int32_t* h_half_sums = nullptr;  // [P, f/16] int32
  float* down = nullptr;           // [P, d] f32, sorted-pair rows (what launch_combine reads)
  float* h = nullptr;              // [P, f] f32 before requantisation, or null (tests)
  float* gate = nullptr;           // [P, f] f32, or null (tests)
  float* up = nullptr;             // [P, f] f32, or null (tests)
};

// Pairs per row tile of the chain kernels: the tile the grouping's tile offsets must be built for.
int wmma_tile_pairs();

// Gate/up + SwiGLU + requant, then down, for every sorted pair. x_codes / x_scales: [T, d] /
// [T, d/32] from launch_quantize_rows; grouping: the device tables, its tile offsets built for
// wmma_tile_pairs() (launch_group_by_expert with that tile: the only tile offsets a run builds);
// n_pairs = T*k. Throws kInternal for a layer wmma_supports() does not cover.
void run_products(const MoeLayerWeights& layer, const int8_t* x_codes, const float* x_scales,
                  const DeviceGroupingTables& grouping, int64_t n_pairs, const ProductOutputs& out,
                  cudaStream_t stream);

// A whole layer on this arm without the backend's Workspace: quantise x, group, run_products,
// combine. For tests and tools; y: [T, d] f32 on the device.
struct WmmaLayerWorkspace {
  GroupingWorkspace grouping;
  DeviceBuffer<int8_t> x_codes, h_codes;
  DeviceBuffer<float> x_scales, h_scales, down, gate, up, h;
  DeviceBuffer<int32_t> x_half_sums, h_half_sums;
  bool keep_intermediates = false;  // also fill gate, up, h
  DeviceGroupingTables tables;      // of the last run
};

void run_layer_wmma(const MoeLayerWeights& layer, const float* x /*[T, d]*/,
                    const int32_t* ids /*[T, k]*/, const float* weights /*[T, k]*/,
                    int64_t n_tokens, int k, WmmaLayerWorkspace& ws, cudaStream_t stream,
                    float* y /*[T, d]*/);

}  // namespace strata::cuda::fused_wmma
