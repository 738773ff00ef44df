// Grouping tables: the (token, slot) pairs ordered by (expert, token, slot). Deterministic by
// construction (a counting sort), the same for any thread count and on every backend.
#pragma once
#include <cstdint>
#include <vector>

namespace strata {

struct Grouping {
  int64_t n_tokens = 0;
  int k = 0;
  int64_t n_expert = 0;
  std::vector<int32_t> expert_offsets;  // [E + 1]: pairs of expert e are [offsets[e], offsets[e+1])
  std::vector<int32_t> pair_token;      // [T * k] token of each sorted pair
  std::vector<int32_t> pair_slot;       // [T * k] slot j of each sorted pair
  std::vector<int32_t> slot_to_pair;    // [T * k] position of (t, j) = t*k + j in the sorted order

  int32_t expert_rows(int64_t e) const { return expert_offsets[e + 1] - expert_offsets[e]; }
};

// ids: [T, k], validated by the caller.
Grouping group_by_expert(const int32_t* ids, int64_t n_tokens, int k, int64_t n_expert);

}  // namespace strata
