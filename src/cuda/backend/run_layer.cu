#include "cuda/backend/run_layer.hpp"

#include <string>

#include "common/error.hpp"
#include "cuda/common/check.hpp"
#include "cuda/fused/fused_arm.hpp"
#include "cuda/fused_q10/q10_arm.hpp"
#include "cuda/fused_hopper/hopper_arm.hpp"
#include "cuda/fused_wmma/wmma_arm.hpp"
#include "cuda/pipeline/combine.hpp"
#include "cuda/pipeline/quantize_rows.hpp"
#include "cuda/production/formats.hpp"
#include "cuda/production/grouped_gemm.hpp"
#include "cuda/production/swiglu_requant.hpp"
#include "cuda/production/heuristics.hpp"
#include "formats/registry.hpp"

namespace strata::cuda {
namespace {

void require_carried(const ExpertTensor& t) {
  require(production::carries(t.type), Status::kUnsupported,
          "tensor '" + t.name + "': type " + std::string(ggml_type_name(t.type)) +
              " is not carried by the CUDA production arm (it carries " + production::carried_format_names() + ")");
}

// Tensor `t` of the production GEMM's arguments: its weights, and where its f32 products go.
void set_tensor(blocks::ProductArgs& args, int t, const ExpertTensor& tensor, float* out) {
  args.weights[t] = tensor.data;
  args.weights_end[t] = tensor.end();
  args.expert_stride_bytes[t] = tensor.expert_stride_bytes;
  args.row_bytes = tensor.row_bytes;
  args.product_out[t] = out;
}

}  // namespace

Workspace::Workspace() = default;

Workspace::~Workspace() {
  if (events_ready_)
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

const fused_q10::Q10WorkspaceView* Workspace::last_q10() const { return q10_ ? &q10_->last() : nullptr; }

void Workspace::reserve(int64_t n_tokens, int64_t n_pairs, int64_t d, int64_t f, int64_t n_expert, Arm arm) {
  const auto T = static_cast<size_t>(n_tokens), P = static_cast<size_t>(n_pairs);
  x_codes_.reserve(T * d);
  x_scales_.reserve(T * d / 32);
  x_half_sums_.reserve(T * d / 16);
  // fp32 gate/up rows: the production arm's GEMM output; a fused arm writes them only with keep_h.
  if (arm == Arm::kProduction || keep_h) {
    gate_.reserve(P * f);
    up_.reserve(P * f);
  }
  if (keep_h) h_.reserve(P * f);
  h_codes_.reserve(P * f);
  h_scales_.reserve(P * f / 32);
  h_half_sums_.reserve(P * f / 16);
  down_.reserve(P * d);
  grouping_.reserve(n_pairs, n_expert);
}

void Workspace::carve(ArenaCarver& arena, int64_t n_tokens, int64_t n_pairs, int64_t d, int64_t f,
                      int64_t n_expert, Arm arm) {
  const auto T = static_cast<size_t>(n_tokens), P = static_cast<size_t>(n_pairs);
  arena.take(x_codes_, T * d);
  arena.take(x_scales_, T * d / 32);
  arena.take(x_half_sums_, T * d / 16);
  if (arm == Arm::kProduction) {
    arena.take(gate_, P * f);
    arena.take(up_, P * f);
  }
  arena.take(h_codes_, P * f);
  arena.take(h_scales_, P * f / 32);
  arena.take(h_half_sums_, P * f / 16);
  arena.take(down_, P * d);
  // Only the gate/up kernels of fused-sm80 and fused-hopper tile differently from the grouping.
  if (arm == Arm::kFusedSm80 || arm == Arm::kFusedHopper)
    arena.take(fused_tile_offsets_, static_cast<size_t>(n_expert) + 1);
  grouping_.carve(arena, n_pairs, n_expert);
}

size_t Workspace::external_bytes(int64_t n_tokens, int k, int64_t d, int64_t f, int64_t n_expert, Arm arm) {
  Workspace counting;
  ArenaCarver arena(nullptr, 0);
  counting.carve(arena, n_tokens, n_tokens * k, d, f, n_expert, arm);
  return arena.used();
}

void Workspace::use_external(void* base, size_t bytes, int64_t n_tokens, int k, int64_t d, int64_t f,
                             int64_t n_expert, Arm arm) {
  require(!keep_h, Status::kInternal, "workspace: keep_h needs the workspace's own buffers");
  require(reinterpret_cast<uintptr_t>(base) % ArenaCarver::kAlignBytes == 0, Status::kInvalidArgument,
          "workspace: not 256-byte aligned");
  ArenaCarver arena(base, bytes);
  carve(arena, n_tokens, n_tokens * k, d, f, n_expert, arm);
}

bool production_supports(const MoeLayerWeights& layer) {
  return production::carries(layer.gate.type) && production::carries(layer.up.type) && production::carries(layer.down.type);
}

RunReport choose(const MoeLayerWeights& layer, std::optional<Arm> arm, std::optional<Numerics> numerics) {
  return choose_arm(cuda_arm_specs(), layer, cuda_device_caps(), arm, numerics).report;
}

RunReport run_layer(const MoeLayerWeights& layer, const DeviceInputs& in, std::optional<Arm> arm, Workspace& ws,
                    cudaStream_t stream, float* y, PhaseTimes* times, std::optional<Numerics> numerics) {
  require(layer.is_plain(), Status::kUnsupported,
          "run_layer: the CUDA arms compute the plain SwiGLU expert only (no per-expert biases, "
          "no swiglu-oai)");
  validate_layer(layer);
  const RunReport chosen = choose(layer, arm, numerics);
  run_chosen(layer, in, chosen, ws, stream, y, times);
  return chosen;
}

void run_chosen(const MoeLayerWeights& layer, const DeviceInputs& in, const RunReport& chosen, Workspace& ws,
                cudaStream_t stream, float* y, PhaseTimes* times) {
  // NOTE: before either profile's path: no CUDA kernel computes biases or SwiGLU-OAI.
  require(layer.is_plain(), Status::kUnsupported,
          "run_layer: the CUDA arms compute the plain SwiGLU expert only (no per-expert biases, "
          "no swiglu-oai)");
  if (chosen.numerics == Numerics::kQ10) {
    if (!ws.q10_) ws.q10_ = std::make_unique<fused_q10::Q10Workspace>();
    ws.q10_->keep_h = ws.keep_h;
    if (times != nullptr && !ws.events_ready_) {
      for (cudaEvent_t& e : ws.events_) STRATA_CUDA_CHECK(cudaEventCreate(&e));
      ws.events_ready_ = true;
    }
    // The q10 kernels expose no phase boundaries here: only the layer's total time.
    if (times != nullptr) STRATA_CUDA_CHECK(cudaEventRecord(ws.events_[0], stream));
    const fused_q10::Q10Kernels kernels = chosen.arm == Arm::kFusedWmma     ? fused_q10::Q10Kernels::kWmma
                                          : chosen.arm == Arm::kFusedHopper ? fused_q10::Q10Kernels::kHopper
                                                                            : fused_q10::Q10Kernels::kSm80;
    require(chosen.arm == Arm::kFusedWmma || chosen.arm == Arm::kFusedHopper || chosen.arm == Arm::kFusedSm80,
            Status::kInternal, std::string("run_chosen: no q10 CUDA arm ") + arm_name(chosen.arm));
    fused_q10::run_layer_q10(layer, in, *ws.q10_, stream, y, kernels);
    if (times != nullptr) {
      STRATA_CUDA_CHECK(cudaEventRecord(ws.events_[6], stream));
      STRATA_CUDA_CHECK(cudaEventSynchronize(ws.events_[6]));
      float total = 0;
      STRATA_CUDA_CHECK(cudaEventElapsedTime(&total, ws.events_[0], ws.events_[6]));
      *times = PhaseTimes{};
      times->total_us = 1e3f * total;
    }
    return;
  }
  validate_layer(layer);
  if (chosen.arm == Arm::kProduction) {  // the fused arms' own checks run in their launchers
    require_carried(layer.gate);
    require_carried(layer.up);
    require_carried(layer.down);
  }
  require(in.n_tokens >= 0, Status::kInvalidArgument, "n_tokens: negative");
  require(in.k >= 1 && in.k <= layer.n_expert, Status::kInvalidArgument,
          "k: " + std::to_string(in.k) + " (must be in [1, E = " + std::to_string(layer.n_expert) + "])");
  require(in.n_tokens * in.k < (int64_t{1} << 31), Status::kInvalidArgument, "n_tokens * k: must fit in int32");
  require(layer.d <= (int64_t{1} << 30) && layer.f <= (int64_t{1} << 30), Status::kInvalidArgument,
          "layer: d and f must fit in int32");
  if (in.n_tokens == 0) return;
  require(in.x != nullptr && in.ids != nullptr && in.weights != nullptr && y != nullptr,
          Status::kInvalidArgument, "x, ids, weights, y: null device pointer");
  require(reinterpret_cast<uintptr_t>(in.x) % 16 == 0, Status::kInvalidArgument, "x: not 16-byte aligned");

  const int64_t T = in.n_tokens, k = in.k, d = layer.d, f = layer.f, E = layer.n_expert;
  const int64_t P = T * k;
  ws.reserve(T, P, d, f, E, chosen.arm);

  // Mean pairs per expert picks the tile: a speed choice only (see tile_config.hpp).
  const auto tile = production::choose_tile(P, E);
  // The grouping's tile offsets are built for the arm that reads them: the chain tile of
  // fused-wmma (its gate/up and down both), else the production GEMM's (production, and the down
  // product of fused-sm80 / fused-hopper, whose gate/up kernels build their own).
  const bool wmma = chosen.arm == Arm::kFusedWmma;
  const int group_tile_pairs = wmma ? fused_wmma::wmma_tile_pairs() : production::tile_pairs(tile);
  if (times != nullptr && !ws.events_ready_) {
    for (cudaEvent_t& e : ws.events_) STRATA_CUDA_CHECK(cudaEventCreate(&e));
    ws.events_ready_ = true;
  }
  auto mark = [&](int i) {
    if (times != nullptr) STRATA_CUDA_CHECK(cudaEventRecord(ws.events_[i], stream));
  };

  mark(0);
  // ---- quantise x once per token -------------------------------------------------------
  launch_quantize_rows(in.x, T, d, ws.x_codes_.get(), ws.x_scales_.get(), ws.x_half_sums_.get(), stream);
  mark(1);
  // ---- group the pairs by expert, tile offsets for the persistent GEMMs ------------------
  const DeviceGroupingTables g =
      launch_group_by_expert(in.ids, T, in.k, E, group_tile_pairs, ws.grouping_, stream);
  mark(2);
  // The arm chosen once for this call (choose()): fused-wmma, fused-hopper, fused-sm80 or production.
  const bool hopper = chosen.arm == Arm::kFusedHopper;
  const bool fused_gate_up = chosen.arm == Arm::kFusedSm80;
  require(wmma || hopper || fused_gate_up || chosen.arm == Arm::kProduction, Status::kInternal,
          std::string("run_chosen: no q8 CUDA arm ") + arm_name(chosen.arm));
  const fused::GateUpOutputs h_out{ws.h_codes_.get(), ws.h_scales_.get(), ws.h_half_sums_.get(),
                                   ws.keep_h ? ws.h_.get() : nullptr, ws.keep_h ? ws.gate_.get() : nullptr,
                                   ws.keep_h ? ws.up_.get() : nullptr};
  // ---- gate and up --------------------------------------------------------------------
  blocks::ProductArgs gu;
  gu.in_features = static_cast<int>(d);
  gu.out_features = static_cast<int>(f);
  gu.act_codes = ws.x_codes_.get();
  gu.act_scales = ws.x_scales_.get();
  gu.act_half_sums = ws.x_half_sums_.get();
  gu.pair_row = g.pair_token;
  gu.expert_offsets = g.expert_offsets;
  gu.tile_offsets = g.tile_offsets;
  gu.n_expert = static_cast<int>(E);
  if (wmma) {
    // ---- fused-wmma arm: gate/up + SwiGLU + requant and down on mma_tile_16 ----------------
    // NOTE: its down product runs here too, so the phase times put down inside gate/up.
    fused_wmma::run_products(layer, ws.x_codes_.get(), ws.x_scales_.get(), g, P,
                             {ws.h_codes_.get(), ws.h_scales_.get(), ws.h_half_sums_.get(), ws.down_.get(),
                              ws.keep_h ? ws.h_.get() : nullptr, ws.keep_h ? ws.gate_.get() : nullptr,
                              ws.keep_h ? ws.up_.get() : nullptr},
                             stream);
  } else if (hopper) {
    // ---- fused-hopper arm: gate/up + SwiGLU + requantise h on wgmma ---------------------
    fused_hopper::run_gate_up(layer, ws.x_codes_.get(), ws.x_scales_.get(), g, P, ws.fused_tile_offsets_, h_out, stream);
  } else if (fused_gate_up) {
    // ---- fused arm: gate/up + SwiGLU + requantise h in one kernel -----------------------
    fused::run_gate_up(layer, ws.x_codes_.get(), ws.x_scales_.get(), g, P, ws.fused_tile_offsets_, h_out, stream);
  } else if (layer.gate.type == layer.up.type) {
    set_tensor(gu, 0, layer.gate, ws.gate_.get());
    set_tensor(gu, 1, layer.up, ws.up_.get());
    gu.n_tensors = 2;
    production::launch_grouped_gemm(layer.gate.type, gu, tile, stream);
  } else {
    gu.n_tensors = 1;
    set_tensor(gu, 0, layer.gate, ws.gate_.get());
    production::launch_grouped_gemm(layer.gate.type, gu, tile, stream);
    set_tensor(gu, 0, layer.up, ws.up_.get());
    production::launch_grouped_gemm(layer.up.type, gu, tile, stream);
  }
  mark(3);
  // ---- SwiGLU + requantise h ----------------------------------------------------------
  if (!fused_gate_up && !wmma && !hopper)
    production::launch_swiglu_requant(ws.gate_.get(), ws.up_.get(), P, f, ws.h_codes_.get(), ws.h_scales_.get(),
                                      ws.h_half_sums_.get(), ws.keep_h ? ws.h_.get() : nullptr, stream);
  mark(4);
  // ---- down: h rows are already in sorted-pair order -----------------------------------
  blocks::ProductArgs dn = gu;
  dn.in_features = static_cast<int>(f);
  dn.out_features = static_cast<int>(d);
  dn.act_codes = ws.h_codes_.get();
  dn.act_scales = ws.h_scales_.get();
  dn.act_half_sums = ws.h_half_sums_.get();
  dn.pair_row = nullptr;
  dn.n_tensors = 1;
  set_tensor(dn, 0, layer.down, ws.down_.get());
  dn.product_out[1] = nullptr;
  if (hopper && fused_hopper::hopper_down_kernel())
    fused_hopper::run_down(layer, h_out, g, P, ws.fused_tile_offsets_, ws.down_.get(), stream);
  else if (!wmma)
    production::launch_grouped_gemm(layer.down.type, dn, tile, stream);
  mark(5);
  // ---- combine in slot order ------------------------------------------------------------
  launch_combine(ws.down_.get(), g.slot_to_pair, in.weights, T, in.k, d, y, stream);
  mark(6);

  ws.view_ = WorkspaceView{ws.x_codes_.get(), ws.x_scales_.get(), ws.x_half_sums_.get(), g, ws.gate_.get(),
                           ws.up_.get(), ws.keep_h ? ws.h_.get() : nullptr, ws.down_.get(), P};
  if (times != nullptr) {
    STRATA_CUDA_CHECK(cudaEventSynchronize(ws.events_[6]));
    float ms[6];
    for (int i = 0; i < 6; ++i) STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms[i], ws.events_[i], ws.events_[i + 1]));
    float total = 0;
    STRATA_CUDA_CHECK(cudaEventElapsedTime(&total, ws.events_[0], ws.events_[6]));
    *times = PhaseTimes{1e3f * ms[0], 1e3f * ms[1], 1e3f * ms[2], 1e3f * ms[3], 1e3f * ms[4], 1e3f * ms[5],
                        1e3f * total};
  }
}

}  // namespace strata::cuda
