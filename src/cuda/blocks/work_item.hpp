// The work-item scheduler of the persistent grouped-product kernels: item i of a launch is pair
// tile i / column_blocks (of the device-built tile offsets) x column block i % column_blocks.
// Host and device; the persistent grid itself comes from cuda/common/persistent_launch.hpp.
#pragma once
#include <cstdint>

#include "common/hd.hpp"
#include "cuda/blocks/product_args.hpp"
#include "cuda/pipeline/tile_lookup.hpp"

namespace strata::cuda::blocks {

// Where a work item lies.
struct WorkItem {
  int expert;
  int32_t pair_begin;  // first sorted pair of the tile
  int pair_count;      // valid pairs of the tile, 1..kPairs
  int column_block;    // 0 .. column_blocks - 1
};

// Work items of a launch: every non-empty pair tile times `column_blocks`.
STRATA_HD_INLINE int64_t work_items(const ProductArgs& args, int column_blocks) {
  return static_cast<int64_t>(args.tile_offsets[args.n_expert]) * column_blocks;
}

template <int kPairs>
STRATA_HD_INLINE WorkItem work_item(const ProductArgs& args, int64_t item, int column_blocks) {
  WorkItem w;
  const auto tile = static_cast<int32_t>(item / column_blocks);
  w.column_block = static_cast<int>(item % column_blocks);
  w.expert = expert_of_tile(args.tile_offsets, args.n_expert + 1, tile);
  w.pair_begin = args.expert_offsets[w.expert] + (tile - args.tile_offsets[w.expert]) * kPairs;
  const int32_t left = args.expert_offsets[w.expert + 1] - w.pair_begin;
  w.pair_count = left < kPairs ? static_cast<int>(left) : kPairs;
  return w;
}

// The activation row of sorted pair `pair`.
STRATA_HD_INLINE int64_t pair_act_row(const ProductArgs& args, int32_t pair) {
  return args.pair_row != nullptr ? args.pair_row[pair] : pair;
}

}  // namespace strata::cuda::blocks
