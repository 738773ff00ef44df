// How many CPU threads a call uses.
#pragma once
#include <omp.h>

#include <algorithm>

#include "common/limits.hpp"

namespace strata {

// `threads`, or for 0 OpenMP's default (OMP_NUM_THREADS or the cores), capped at
// limits::kMaxThreads so that a huge environment value cannot exhaust the process.
inline int resolve_threads(int threads) {
  return threads > 0 ? threads : std::min(omp_get_max_threads(), limits::kMaxThreads);
}

}  // namespace strata
