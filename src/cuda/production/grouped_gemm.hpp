// The production arm's grouped int8 GEMM: for every non-empty expert, its pairs' activation
// codes against that expert's weight rows, decoded from GGUF blocks into shared memory.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "cuda/blocks/product_args.hpp"
#include "formats/ggml_type.hpp"

namespace strata::cuda::production {

// Pairs per CTA tile: kSmall 32, kLarge 64, kWide 128 (tile_config.hpp; heuristics.hpp picks one).
enum class TileKind { kLarge, kSmall, kWide };

int tile_pairs(TileKind kind);

// The product of args.n_tensors tensors (gate and up in one launch, or one tensor) of one format:
// args.weights, expert_stride_bytes, row_bytes, in_features (a multiple of 32 and of the format's
// block), out_features, act_codes / act_scales, pair_row, expert_offsets, tile_offsets (built for
// tile_pairs(tile)), n_expert; writes args.product_out[t] for every tensor t.
template <class F>
void launch_grouped_gemm(const blocks::ProductArgs& args, TileKind tile, cudaStream_t stream);

// The same for a format named at run time: throws strata::Error when the arm does not carry it.
void launch_grouped_gemm(GgmlType type, const blocks::ProductArgs& args, TileKind tile,
                         cudaStream_t stream);

// Whether the arm carries `type` (ProductionFormats, formats.hpp), and the names of all it carries.
bool carries(GgmlType type);
std::string carried_format_names();

}  // namespace strata::cuda::production
