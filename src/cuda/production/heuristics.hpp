// Which production tile a launch uses: from the mean pairs per expert, known on the host before
// the grouping runs. A speed choice only (tile_config.hpp).
#pragma once
#include <cstdint>

#include "cuda/production/grouped_gemm.hpp"

namespace strata::cuda::production {

// Below this mean the small tile wastes less of each CTA on padding pairs.
inline constexpr double kSmallTileMeanPairs = 40.0;
// From this mean the 128-pair tile (one 16-warp CTA per SM) beats two 64-pair CTAs per SM.
// Measured on the H200 (bench/results/2026-11-30-production-perf.md): mean 128 (qwen35-a3b,
// T = 4096) large 2143 us vs wide 2386 us per layer; mean 256 (qwen3-30b) wide 2715 vs large 2815.
inline constexpr double kWideTileMeanPairs = 192.0;

// The tile for n_pairs routed pairs over n_expert experts. STRATA_PROD_TILE=small|large|wide
// overrides it (side-by-side timing of the tiles in one build).
TileKind choose_tile(int64_t n_pairs, int64_t n_expert);

}  // namespace strata::cuda::production
