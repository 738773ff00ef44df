#include "cuda/pipeline/grouping.hpp"

#include <cub/device/device_radix_sort.cuh>

#include "common/error.hpp"

namespace strata::cuda {
namespace {

int key_bits(int64_t n_expert) {  // bits to hold keys 0..E (E is the out-of-range sentinel)
  int bits = 1;
  while ((int64_t{1} << bits) <= n_expert) ++bits;
  return bits;
}

}  // namespace

void GroupingWorkspace::reserve(int64_t n_pairs, int64_t n_expert) {
  const auto pairs = static_cast<size_t>(n_pairs);
  keys_in_.reserve(pairs);
  keys_out_.reserve(pairs);
  values_in_.reserve(pairs);
  values_out_.reserve(pairs);
  pair_token_.reserve(pairs);
  pair_slot_.reserve(pairs);
  slot_to_pair_.reserve(pairs);
  expert_offsets_.reserve(static_cast<size_t>(n_expert) + 1);
  tile_offsets_.reserve(static_cast<size_t>(n_expert) + 1);
  size_t temp_bytes = 0;
  STRATA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in_.get(), keys_out_.get(),
                                                    values_in_.get(), values_out_.get(), n_pairs, 0,
                                                    key_bits(n_expert)));
  sort_temp_.reserve(temp_bytes);
}

void GroupingWorkspace::carve(ArenaCarver& arena, int64_t n_pairs, int64_t n_expert) {
  const auto pairs = static_cast<size_t>(n_pairs);
  arena.take(keys_in_, pairs);
  arena.take(keys_out_, pairs);
  arena.take(values_in_, pairs);
  arena.take(values_out_, pairs);
  arena.take(pair_token_, pairs);
  arena.take(pair_slot_, pairs);
  arena.take(slot_to_pair_, pairs);
  arena.take(expert_offsets_, static_cast<size_t>(n_expert) + 1);
  arena.take(tile_offsets_, static_cast<size_t>(n_expert) + 1);
  // NOTE: a size query only (null temp storage): it runs on the host and enqueues nothing.
  size_t temp_bytes = 0;
  STRATA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, static_cast<uint32_t*>(nullptr),
                                                    static_cast<uint32_t*>(nullptr), static_cast<int32_t*>(nullptr),
                                                    static_cast<int32_t*>(nullptr), n_pairs, 0, key_bits(n_expert)));
  arena.take(sort_temp_, temp_bytes);
}

DeviceGroupingTables GroupingWorkspace::tables() const {
  return {expert_offsets_.get(), pair_token_.get(), pair_slot_.get(), slot_to_pair_.get(), tile_offsets_.get()};
}

DeviceGroupingTables launch_group_by_expert(const int32_t* ids, int64_t n_tokens, int k, int64_t n_expert,
                                            int tile_pairs, GroupingWorkspace& ws, cudaStream_t stream) {
  const int64_t n_pairs = n_tokens * k;
  require(n_pairs < (int64_t{1} << 31) && n_expert < (int64_t{1} << 30) && tile_pairs > 0,
          Status::kInvalidArgument, "grouping: T*k must fit in int32");
  ws.reserve(n_pairs, n_expert);
  const DeviceGroupingTables tables = ws.tables();
  launch_grouping_keys(ids, n_pairs, n_expert, ws.keys_in_.get(), ws.values_in_.get(), stream);
  if (n_pairs > 0) {
    size_t temp_bytes = ws.sort_temp_.capacity();
    STRATA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(ws.sort_temp_.get(), temp_bytes, ws.keys_in_.get(),
                                                      ws.keys_out_.get(), ws.values_in_.get(),
                                                      ws.values_out_.get(), n_pairs, 0, key_bits(n_expert),
                                                      stream));
    STRATA_CUDA_CHECK_LAUNCH("cub::DeviceRadixSort::SortPairs");
  }
  launch_grouping_tables(ws.keys_out_.get(), ws.values_out_.get(), n_pairs, k, n_expert, tables, stream);
  launch_tile_offsets(tables.expert_offsets, n_expert, tile_pairs, tables.tile_offsets, stream);
  return tables;
}

}  // namespace strata::cuda
