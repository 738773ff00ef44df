// The CUDA backend's C++ entry point: one MoE layer on device pointers and a stream.
//
//   strata::cuda::Workspace ws;                       // reused across layers and calls
//   RunReport ran = strata::cuda::run_layer(layer, inputs, Arm::kFused, ws, stream, d_y);
//   // ran.arm: fused-hopper on sm_90a, else fused-sm80 (or production, ran.fallback says why)
//
// `layer` is a MoeLayerWeights whose tensor data pointers are device addresses of the native
// GGUF blocks (2-byte alignment is enough). Everything is enqueued on `stream`; the call does not
// wait for the device, except (documented per item) when the workspace grows (cudaMalloc/cudaFree)
// and when `times` is given (it waits for the layer's last event to read the timings). A
// workspace over caller memory (use_external) never grows: such a run can be graph-captured.
#pragma once
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>

#include <optional>

#include "cuda/common/device_buffer.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "pipeline/arm_registry.hpp"
#include "pipeline/layer.hpp"
#include "pipeline/numerics.hpp"
#include "pipeline/run.hpp"

namespace strata::cuda {

namespace fused_q10 {
class Q10Workspace;
struct Q10WorkspaceView;
}  // namespace fused_q10

struct DeviceInputs {
  const float* x = nullptr;        // [T, d] f32 on the device, 16-byte aligned
  const int32_t* ids = nullptr;    // [T, k] int32 on the device, each in [0, E), distinct per token
  const float* weights = nullptr;  // [T, k] f32 on the device
  int64_t n_tokens = 0;
  int k = 0;
};

// Per-phase device time of one run_layer call, microseconds (CUDA events).
struct PhaseTimes {
  float quantize_us = 0, group_us = 0, gate_up_us = 0, swiglu_us = 0, down_us = 0, combine_us = 0;
  float total_us = 0;
};

// Device intermediates of the last run, for tests and tools (valid until the next run).
struct WorkspaceView {
  const int8_t* x_codes = nullptr;     // [T, d] int8
  const float* x_scales = nullptr;     // [T, d/32]
  const int32_t* x_half_sums = nullptr;  // [T, d/16]
  DeviceGroupingTables grouping;       // tables of pipeline/grouping.hpp + tile offsets
  const float* gate = nullptr;         // [P, f] f32, sorted-pair rows
  const float* up = nullptr;           // [P, f]
  const float* h = nullptr;            // [P, f] before requantisation (only with keep_h)
  const float* down = nullptr;         // [P, d] sorted-pair rows
  int64_t n_pairs = 0;
};

class Workspace {
 public:
  Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace();

  bool keep_h = false;  // also store h before requantisation (tests)
  const WorkspaceView& last() const { return view_; }
  // The intermediates of the last q10 run (null before one).
  const fused_q10::Q10WorkspaceView* last_q10() const;

  // Bytes of a caller's workspace for q8 runs of up to n_tokens x k on `arm` (keep_h off): the
  // fp32 gate/up rows only for production, the gate/up tile offsets only for fused-sm80 and fused-hopper.
  static size_t external_bytes(int64_t n_tokens, int k, int64_t d, int64_t f, int64_t n_expert, Arm arm);
  // Borrows every buffer from `base` (device memory, external_bytes of it, 256-byte aligned):
  // runs of up to n_tokens x k on `arm` then allocate nothing and never synchronise (without `times`).
  void use_external(void* base, size_t bytes, int64_t n_tokens, int k, int64_t d, int64_t f, int64_t n_expert,
                    Arm arm);

 private:
  friend void run_chosen(const MoeLayerWeights&, const DeviceInputs&, const RunReport&, Workspace&, cudaStream_t,
                         float*, PhaseTimes*);
  void reserve(int64_t n_tokens, int64_t n_pairs, int64_t d, int64_t f, int64_t n_expert, Arm arm);
  void carve(ArenaCarver& arena, int64_t n_tokens, int64_t n_pairs, int64_t d, int64_t f, int64_t n_expert,
             Arm arm);

  GroupingWorkspace grouping_;
  DeviceBuffer<int8_t> x_codes_, h_codes_;
  DeviceBuffer<float> x_scales_, h_scales_, gate_, up_, h_, down_;
  DeviceBuffer<int32_t> x_half_sums_, h_half_sums_;
  DeviceBuffer<int32_t> fused_tile_offsets_;  // [E + 1] row tiles of the fused gate/up kernel
  std::array<cudaEvent_t, 7> events_{};
  bool events_ready_ = false;
  WorkspaceView view_;
  std::unique_ptr<fused_q10::Q10Workspace> q10_;  // the q10 arm's buffers, made on its first run
};

// The arm and profile a run takes: the registry's rule (pipeline/arm_registry.hpp, choose_arm)
// over the CUDA arms (cuda_arm_specs()) on this device. Throws kUnsupported naming the layer and
// each arm's reason when none carries it.
RunReport choose(const MoeLayerWeights& layer, std::optional<Arm> arm, std::optional<Numerics> numerics);

// Runs the arm `chosen` names (from choose(): the arm and profile must carry the layer).
// y: [T, d] f32 on the device. Throws strata::Error: kInvalidArgument naming the argument, kCuda.
// With keep_h, the fused arms also fill gate/up/h. Under q10 `times` holds the total only.
void run_chosen(const MoeLayerWeights& layer, const DeviceInputs& in, const RunReport& chosen,
                Workspace& workspace, cudaStream_t stream, float* y, PhaseTimes* times = nullptr);

// choose() then run_chosen(): the arm and profile that ran. The profile here defaults to q8 (the
// API's default rule lives in the backends: RunOptions); pass std::nullopt for the registry's.
RunReport run_layer(const MoeLayerWeights& layer, const DeviceInputs& in, std::optional<Arm> arm,
                    Workspace& workspace, cudaStream_t stream, float* y, PhaseTimes* times = nullptr,
                    std::optional<Numerics> numerics = Numerics::kQ8);

// True when the production arm carries all three of the layer's formats.
bool production_supports(const MoeLayerWeights& layer);

}  // namespace strata::cuda
