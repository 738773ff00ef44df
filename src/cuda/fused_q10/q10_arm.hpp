// The q10 fused arm, one layer on device pointers -- the kernel family the caller names: the
// 16x16x16 f16 tile kernels (wmma_q10_kernel.cuh, the source the HIP build shares), the sm_90a
// kernels (bulk copies + wgmma f16, hopper_q10_kernel.cuh) or the sm_80 kernels (mma.sync
// m16n8k16 f16):
//
//   quantise x per 64 (f16 codes) -> group -> gate/up + SwiGLU + h requantised per 64
//   -> down, one fp32 row per sorted pair -> combine in slot order
//
// Bitwise the q10 CPU arms' results (pipeline/arith_q10.hpp defines the bits). The sm_80 kernels
// carry every format of q10_formats.hpp as gate/up and as down, in any combination (gate and up
// one format), with d a multiple of 32 and of the gate/up block, f a multiple of 32 and of the
// down block; the Hopper kernels carry the same formats with d and f multiples of 64
// (q10_hopper_supports), the wmma kernels IQ3_S gate/up + Q2_0 down (q10_formats.hpp's traits), and
// a layer the kernels named do not carry runs the sm_80 kernels.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cuda/backend/run_layer.hpp"
#include "cuda/common/device_buffer.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "pipeline/layer.hpp"

namespace strata::cuda::fused_q10 {

// The kernel family a run takes (chosen by the arm registry: fused-sm80, fused-hopper, fused-wmma).
enum class Q10Kernels { kSm80, kHopper, kWmma };

// Device intermediates of the last run, for tests and tools (valid until the next run).
struct Q10WorkspaceView {
  const __half* x_codes = nullptr;  // [T, d] f16 codes
  const float* x_scales = nullptr;  // [T, d/64]
  const int32_t* x_sums = nullptr;  // [T, d/16]
  DeviceGroupingTables grouping;
  const __half* h_codes = nullptr;  // [P, f] sorted-pair rows
  const float* h_scales = nullptr;  // [P, f/64]
  const int32_t* h_sums = nullptr;  // [P, f/16]
  const float* gate = nullptr;      // [P, f] (only with keep_h)
  const float* up = nullptr;        // [P, f] (only with keep_h)
  const float* h = nullptr;         // [P, f] before requantisation (only with keep_h)
  const float* down = nullptr;      // [P, d] sorted-pair rows
  int64_t n_pairs = 0;
};

class Q10Workspace {
 public:
  Q10Workspace() = default;
  Q10Workspace(const Q10Workspace&) = delete;
  Q10Workspace& operator=(const Q10Workspace&) = delete;

  bool keep_h = false;  // also store gate, up and h before requantisation (tests)
  const Q10WorkspaceView& last() const { return view_; }

 private:
  friend void run_layer_q10(const MoeLayerWeights&, const DeviceInputs&, Q10Workspace&,
                            cudaStream_t, float*, Q10Kernels);
  void reserve(int64_t n_tokens, int64_t n_pairs, int64_t d, int64_t f, int64_t n_expert);

  GroupingWorkspace grouping_;
  DeviceBuffer<__half> x_codes_, h_codes_;
  DeviceBuffer<float> x_scales_, h_scales_, gate_, up_, h_, down_;
  DeviceBuffer<int32_t> x_sums_, h_sums_;
  DeviceBuffer<int32_t> down_tile_offsets_;  // [E + 1], where down's Hopper tile is not gate/up's
  Q10WorkspaceView view_;
};

// Whether the q10 fused kernels carry the layer (formats and geometry), and when not, why: a
// message naming the formats, d, f and the rule the layer breaks.
bool q10_fused_supports(const MoeLayerWeights& layer);
std::string q10_fused_refusal(const MoeLayerWeights& layer);
// Whether the sm_90a kernels (bulk copies + wgmma f16) carry it too, and whether this device and
// build can run them (an sm_90 device with the build's 90a image). Every family gives the same bits.
bool q10_hopper_supports(const MoeLayerWeights& layer);
bool use_q10_hopper(const MoeLayerWeights& layer);
// Whether the 16x16x16 tile kernels carry it (IQ3_S gate/up + Q2_0 down, d and f multiples of 64).
bool q10_wmma_supports(const MoeLayerWeights& layer);

// The Hopper down kernel's tile (64 or 128 pairs): gate/up's (hopper_q10_tile_pairs), or the 64-pair
// one where the down format measured faster there at the mean (q10_arm.cpp). STRATA_PF_FUSED_TILE
// forces both. A speed choice only.
int hopper_q10_down_tile_pairs(double mean_pairs_per_expert, GgmlType down);

// y: [T, d] f32 on the device. Throws strata::Error: kUnsupported when q10_fused_supports is
// false (or the family named does not carry it), kInvalidArgument naming the argument, kCuda.
void run_layer_q10(const MoeLayerWeights& layer, const DeviceInputs& in, Q10Workspace& workspace,
                   cudaStream_t stream, float* y, Q10Kernels kernels);

}  // namespace strata::cuda::fused_q10
