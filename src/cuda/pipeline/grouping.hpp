// Grouping on the device: the tables of pipeline/grouping.hpp (the same values as the CPU's
// group_by_expert) plus the row-tile offsets the persistent GEMM walks, all built on the stream
// without a host synchronisation.
//
// The T*k (token, slot) pairs are sorted by expert with a stable LSD radix sort whose values are
// the pair numbers t*k + j, so within an expert the order is (token, slot), as on the CPU.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/common/device_buffer.hpp"

namespace strata::cuda {

struct DeviceGroupingTables {
  int32_t* expert_offsets = nullptr;  // [E + 1] pairs of expert e: [offsets[e], offsets[e+1])
  int32_t* pair_token = nullptr;      // [T*k] token of each sorted pair
  int32_t* pair_slot = nullptr;       // [T*k] slot j of each sorted pair
  int32_t* slot_to_pair = nullptr;    // [T*k] sorted position of pair t*k + j
  int32_t* tile_offsets = nullptr;    // [E + 1] row tiles (of tile_pairs pairs) before expert e
};

class GroupingWorkspace {
 public:
  // Grows the buffers for n_pairs = T*k pairs over n_expert experts (may allocate).
  void reserve(int64_t n_pairs, int64_t n_expert);
  // Lays the buffers for n_pairs x n_expert out in `arena` (or counts them); no allocation.
  void carve(ArenaCarver& arena, int64_t n_pairs, int64_t n_expert);
  DeviceGroupingTables tables() const;

 private:
  friend DeviceGroupingTables launch_group_by_expert(const int32_t*, int64_t, int, int64_t, int,
                                                     GroupingWorkspace&, cudaStream_t);
  DeviceBuffer<uint32_t> keys_in_, keys_out_;       // [P] expert of each pair, unsorted / sorted
  DeviceBuffer<int32_t> values_in_, values_out_;    // [P] pair numbers t*k + j
  DeviceBuffer<int32_t> expert_offsets_, tile_offsets_, pair_token_, pair_slot_, slot_to_pair_;
  DeviceBuffer<uint8_t> sort_temp_;
};

// ids: [T, k] int32 on the device, each in [0, E) (validated by the caller: an id outside is
// grouped past the last expert and its pair is never computed). tile_pairs: pairs per row tile.
DeviceGroupingTables launch_group_by_expert(const int32_t* ids, int64_t n_tokens, int k, int64_t n_expert,
                                            int tile_pairs, GroupingWorkspace& workspace, cudaStream_t stream);

// Kernel launchers (one kernel per file).
void launch_grouping_keys(const int32_t* ids, int64_t n_pairs, int64_t n_expert, uint32_t* keys,
                          int32_t* values, cudaStream_t stream);
void launch_grouping_tables(const uint32_t* sorted_keys, const int32_t* sorted_values, int64_t n_pairs, int k,
                            int64_t n_expert, const DeviceGroupingTables& tables, cudaStream_t stream);
void launch_tile_offsets(const int32_t* expert_offsets, int64_t n_expert, int tile_pairs, int32_t* tile_offsets,
                         cudaStream_t stream);

}  // namespace strata::cuda
