#include "cuda/common/check.hpp"
#include "cuda/fused_wmma/chain_stage.hpp"
#include "wmma_probes.hpp"
#include "cuda/fused_wmma/tile_config.hpp"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"
#include "hip/portability.hpp"

namespace strata::cuda::fused_wmma {
namespace {

using Tile = ChainTileDefault;

template <class F>
__global__ void __launch_bounds__(Tile::kThreads) decode_stage_probe_kernel(
    const uint8_t* rows_base,  // [n_rows, row_bytes] blocks, 2-byte aligned
    size_t row_bytes, int n_rows, int n_subs, int stage,
    int8_t* codes,    // [kStageSlices][kWeightRows][16] int8
    float* scales) {  // [kWeightRows][kStageSubs] f32
  __shared__ StageTiles<Tile> st;
  WeightRows rows;
  rows.expert_base[0] = rows_base;
  rows.row_bytes = row_bytes;
  rows.split = Tile::kWeightRows;
  rows.first = 0;
  rows.limit = n_rows;
  const int tid = gpu::thread_x();
  decode_weight_stage<F, Tile>(tid, rows, stage, n_subs, st);
  gpu::sync_block();
  const int8_t* flat_codes = &st.weights[0][0][0];
  for (int i = tid; i < Tile::kStageSlices * Tile::kWeightRows * 16; i += Tile::kThreads)
    codes[i] = flat_codes[i];
  const float* flat_scales = &st.weight_scale[0][0];
  for (int i = tid; i < Tile::kWeightRows * Tile::kStageSubs; i += Tile::kThreads)
    scales[i] = flat_scales[i];
}

}  // namespace

template <class F>
void launch_decode_stage_probe(const uint8_t* rows, size_t row_bytes, int n_rows, int n_subs,
                               int stage, int8_t* codes, float* scales, cudaStream_t stream) {
  decode_stage_probe_kernel<F>
      <<<1, Tile::kThreads, 0, stream>>>(rows, row_bytes, n_rows, n_subs, stage, codes, scales);
  STRATA_CUDA_CHECK_LAUNCH("decode_stage_probe_kernel");
}

template void launch_decode_stage_probe<Iq3S>(const uint8_t*, size_t, int, int, int, int8_t*,
                                              float*, cudaStream_t);
template void launch_decode_stage_probe<Q2_0>(const uint8_t*, size_t, int, int, int, int8_t*,
                                              float*, cudaStream_t);

int chain_tile_weight_rows() {
  return Tile::kWeightRows;
}
int chain_tile_stage_subs() {
  return Tile::kStageSubs;
}

}  // namespace strata::cuda::fused_wmma
