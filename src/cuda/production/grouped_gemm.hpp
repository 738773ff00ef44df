// The production arm's grouped int8 GEMM: for every non-empty expert, its pairs' activation
// codes against that expert's weight rows, decoded from GGUF blocks into shared memory.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace strata::cuda::production {

// One stacked weight tensor in native blocks, and where its outputs go.
struct GemmOperand {
  const uint8_t* weights = nullptr;  // [E, out_features, in_features] in blocks, 2-byte aligned
  size_t row_bytes = 0;              // bytes per weight row
  size_t expert_stride_bytes = 0;    // bytes from expert e to e + 1
  float* out = nullptr;              // [P, out_features] f32, rows in sorted-pair order
};

struct GemmArgs {
  GemmOperand op[2];                   // gate and up in one launch, or one operand (down)
  int n_ops = 1;
  int in_features = 0;                 // K, a multiple of 32 and of the format's block
  int out_features = 0;                // weight rows per expert
  const int8_t* act_codes = nullptr;   // [rows, K] int8
  const float* act_scales = nullptr;   // [rows, K/32] f32
  const int32_t* act_half_sums = nullptr;  // [rows, K/16] int32
  const int32_t* pair_row = nullptr;   // [P] activation row of each sorted pair; null: the pair itself
  const int32_t* expert_offsets = nullptr;  // [E + 1]
  const int32_t* tile_offsets = nullptr;    // [E + 1] row tiles before expert e (of tile_pairs)
  int n_expert = 0;
};

// Pairs per CTA tile: kSmall 32, kLarge 64, kWide 128 (tile_config.hpp; heuristics.hpp picks one).
enum class TileKind { kLarge, kSmall, kWide };

int tile_pairs(TileKind kind);

// Format-specialised launchers, one explicit instantiation file per format.
template <class F>
void launch_grouped_gemm(const GemmArgs& args, TileKind tile, cudaStream_t stream);

}  // namespace strata::cuda::production
