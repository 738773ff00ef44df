#include "pipeline/grouping.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace strata {

Grouping group_by_expert(const int32_t* ids, int64_t n_tokens, int k, int64_t n_expert) {
  require(n_tokens >= 0 && k >= 1 && n_expert >= 1, Status::kInvalidArgument,
          fmt::format("group_by_expert: T={} k={} E={} out of range", n_tokens, k, n_expert));
  const int64_t n_pairs = n_tokens * k;
  require(n_pairs <= INT32_MAX, Status::kInvalidArgument,
          fmt::format("group_by_expert: {} (token, slot) pairs exceed the int32 tables", n_pairs));
  Grouping g;
  g.n_tokens = n_tokens;
  g.k = k;
  g.n_expert = n_expert;
  g.expert_offsets.assign(static_cast<size_t>(n_expert + 1), 0);
  g.pair_token.resize(static_cast<size_t>(n_pairs));
  g.pair_slot.resize(static_cast<size_t>(n_pairs));
  g.slot_to_pair.resize(static_cast<size_t>(n_pairs));
  // Counting sort. The scatter walks (t, j) in order, so inside one expert the pairs stay in
  // (token, slot) order: the sort is stable and has exactly one result.
  for (int64_t i = 0; i < n_pairs; ++i) ++g.expert_offsets[static_cast<size_t>(ids[i]) + 1];
  for (int64_t e = 0; e < n_expert; ++e) g.expert_offsets[e + 1] += g.expert_offsets[e];
  std::vector<int32_t> cursor(g.expert_offsets.begin(), g.expert_offsets.end() - 1);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int j = 0; j < k; ++j) {
      const int64_t slot = t * k + j;
      const int32_t pos = cursor[static_cast<size_t>(ids[slot])]++;
      g.pair_token[pos] = static_cast<int32_t>(t);
      g.pair_slot[pos] = j;
      g.slot_to_pair[slot] = pos;
    }
  }
  return g;
}

}  // namespace strata
