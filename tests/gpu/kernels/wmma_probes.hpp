// Small device launches of the wmma arm's building blocks, for the GPU tests: the tile primitive
// on one pair of 16x32 / 32x16 operands, and one stage of the weight decode into plain tiles.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace strata::cuda::fused_wmma {

// c[16 x 16] s32 row-major = sum over the two 16-wide k slices h of A_h * B_h, chained on one
// accumulator with mma_tile_16 and stored with ld = 16. a: [2][16 x 16] s8, element (m, k) of
// slice h at a[256 h + 16 m + k]; b: [2][16 x 16] s8, element (k, n) of slice h at b[256 h + 16 n +
// k].
void launch_mma_tile_16_probe(const int8_t* a, const int8_t* b, int32_t* c, cudaStream_t stream);

// One block of the chain tile decodes K stage `stage` of `n_rows` consecutive weight rows
// (row_bytes apart, the rows past n_rows as absent) with decode_weight_stage<F>, then copies its
// shared tile out: codes [kStageSlices][kWeightRows][16] int8, scales [kWeightRows][kStageSubs]
// f32.
template <class F>
void launch_decode_stage_probe(const uint8_t* rows, size_t row_bytes, int n_rows, int n_subs,
                               int stage, int8_t* codes, float* scales, cudaStream_t stream);

// kWeightRows, kStageSubs, kStageSlices of the chain tile (ChainTileDefault).
int chain_tile_weight_rows();
int chain_tile_stage_subs();

}  // namespace strata::cuda::fused_wmma
