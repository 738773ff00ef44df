#include "cuda/production/heuristics.hpp"

#include "common/env.hpp"
#include "cuda/production/tile_config.hpp"

namespace strata::cuda::production {

TileKind choose_tile(int64_t n_pairs, int64_t n_expert) {
  // STRATA_PROD_TILE=small|large|wide forces a tile (side-by-side timing): speed only.
  if (env_equals("STRATA_PROD_TILE", "small")) return TileKind::kSmall;
  if (env_equals("STRATA_PROD_TILE", "large")) return TileKind::kLarge;
  if (env_equals("STRATA_PROD_TILE", "wide")) return TileKind::kWide;
  const double mean_pairs = static_cast<double>(n_pairs) / static_cast<double>(n_expert > 0 ? n_expert : 1);
  if (mean_pairs < kSmallTileMeanPairs) return TileKind::kSmall;
  if (mean_pairs < kWideTileMeanPairs) return TileKind::kLarge;
  return TileKind::kWide;
}

int tile_pairs(TileKind kind) {
  switch (kind) {
    case TileKind::kSmall: return TileSmall::kPairs;
    case TileKind::kLarge: return TileLarge::kPairs;
    case TileKind::kWide: return TileWide::kPairs;
  }
  return TileLarge::kPairs;
}

}  // namespace strata::cuda::production
