// The arguments of one grouped product launch, the same struct for every q8 CUDA arm and kernel:
// the production grouped GEMM (gate and up, or down), the fused gate/up + SwiGLU + requant kernels
// (sm80, hopper, wmma) and the fused down kernels (hopper, wmma). A kernel reads the fields its
// product needs; the others stay null. No GPU runtime header, so the HIP object check includes it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::cuda::blocks {

struct ProductArgs {
  // ---- weights: stacked tensors in native GGUF blocks ---------------------------------------
  // [E, out_features, in_features] blocks, 2-byte aligned: gate in [0] and up in [1], or one
  // tensor (down, or gate and up of different formats one at a time) in [0].
  const uint8_t* weights[2] = {nullptr, nullptr};
  // One past each tensor's last byte (the bulk copies stay inside the tensor).
  const uint8_t* weights_end[2] = {nullptr, nullptr};
  size_t expert_stride_bytes[2] = {0, 0};  // bytes from expert e to e + 1, per tensor
  size_t row_bytes = 0;                    // bytes per weight row (both tensors alike)
  int n_tensors = 1;                       // tensors in weights[] (kernels with a run-time count)
  int in_features = 0;                     // K: d for gate/up, f for down
  int out_features = 0;                    // weight rows per expert and tensor: f, or d for down
  // ---- activations: int8 codes per 32 values (quantize_block32) ------------------------------
  const int8_t* act_codes = nullptr;       // [rows, K] int8
  const float* act_scales = nullptr;       // [rows, K/32] f32
  const int32_t* act_half_sums = nullptr;  // [rows, K/16] int32 (offset formats; none carried yet)
  // ---- grouping: sorted pairs and work items -------------------------------------------------
  const int32_t* pair_row = nullptr;        // [P] activation row of each sorted pair; null: pair
  const int32_t* expert_offsets = nullptr;  // [E + 1] sorted pairs of expert e
  const int32_t* tile_offsets = nullptr;    // [E + 1] pair tiles (of the kernel's tile) before e
  int n_expert = 0;
  // ---- outputs, sorted-pair rows -------------------------------------------------------------
  // f32 products per tensor, [P, out_features]: the production GEMM's gate and up (or down in
  // [0]); the fused down kernels' rows in [0]; gate and up of the fused gate/up kernels when not
  // null (tests and parity only).
  float* product_out[2] = {nullptr, nullptr};
  // h = swiglu(gate, up) requantised per 32 features (the fused gate/up kernels)
  int8_t* h_codes = nullptr;       // [P, f] int8
  float* h_scales = nullptr;       // [P, f/32] f32
  int32_t* h_half_sums = nullptr;  // [P, f/16] int32
  float* h_out = nullptr;          // [P, f] f32 before requantisation, or null (tests, parity)
};

}  // namespace strata::cuda::blocks
