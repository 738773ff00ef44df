// The counting sort of the grouping (grouping.hpp), for layers of at most kMaxCountBuckets - 1
// experts: the T*k pairs split into `units` consecutive runs of whole 32-pair steps, one warp each.
//   1. count:   each unit's pairs per bucket (bucket = expert, or E for an id outside [0, E)),
//               written bucket-major: hist[b * units + u];
//   2. scan:    one CTA: the exclusive sum of hist in that order (each unit's first sorted position
//               per bucket), the expert offsets from it, and the row-tile offsets;
//   3. scatter: each unit walks its pairs again in order, 32 at a time: a pair's sorted position
//               is its unit's next position for its bucket plus its rank among the step's lanes of
//               that bucket (__match_any_sync).
// So within a bucket the pairs keep their order (unit, step, lane = pair number): the stable order
// of the CPU's group_by_expert. Integer counts only: the same tables on every run.
#pragma once
#include <cstdint>

namespace strata::cuda {

inline constexpr int kMaxCountBuckets = 2048;         // E + 1 buckets, one int per warp and bucket
inline constexpr int kCountWarps = 4;                 // warps (units) per CTA of count and scatter
inline constexpr int kMinUnitSteps = 16;              // 32-pair steps per unit, at least
inline constexpr int kStepBatch = 8;                  // steps whose ids a lane loads before using them
inline constexpr int64_t kMaxHistEntries = 1 << 16;   // (E + 1) * units, so the scan stays short

// Units for n_pairs pairs over n_expert experts: 512 pairs each, fewer and longer ones where that
// would make the histogram larger than kMaxHistEntries. 0 for no pairs.
inline int64_t grouping_units(int64_t n_pairs, int64_t n_expert) {
  if (n_pairs <= 0) return 0;
  const int64_t steps = (n_pairs + 31) / 32;
  int64_t units = (steps + kMinUnitSteps - 1) / kMinUnitSteps;
  const int64_t cap = kMaxHistEntries / (n_expert + 1);
  return units < cap ? units : (cap > 0 ? cap : 1);
}

// 32-pair steps per unit.
inline int64_t grouping_unit_steps(int64_t n_pairs, int64_t units) {
  const int64_t steps = (n_pairs + 31) / 32;
  return units > 0 ? (steps + units - 1) / units : 0;
}

#ifdef __CUDACC__
__device__ __forceinline__ int grouping_bucket(int32_t id, int32_t n_expert) {
  return (id >= 0 && id < n_expert) ? id : n_expert;  // an id outside [0, E) sorts after every expert
}

// The buckets of this lane's pairs in steps [first_step, first_step + kStepBatch) of unit u (-1 past
// the pairs or the unit), all loads issued before any is used: the walk over the steps synchronises
// the warp between steps, which would otherwise keep each load from starting before the last step.
__device__ __forceinline__ void grouping_bucket_batch(const int32_t* __restrict__ ids, int64_t n_pairs,
                                                      int32_t n_expert, int64_t u, int64_t unit_steps,
                                                      int64_t first_step, int lane, int (&bucket)[kStepBatch]) {
  int32_t id[kStepBatch];
#pragma unroll
  for (int s = 0; s < kStepBatch; ++s) {
    const int64_t i = (u * unit_steps + first_step + s) * 32 + lane;
    id[s] = first_step + s < unit_steps && i < n_pairs ? ids[i] : 0;
  }
#pragma unroll
  for (int s = 0; s < kStepBatch; ++s) {
    const int64_t i = (u * unit_steps + first_step + s) * 32 + lane;
    bucket[s] = first_step + s < unit_steps && i < n_pairs ? grouping_bucket(id[s], n_expert) : -1;
  }
}
#endif

}  // namespace strata::cuda
