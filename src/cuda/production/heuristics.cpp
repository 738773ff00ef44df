#include "cuda/production/heuristics.hpp"

#include <cstdlib>
#include <cstring>

#include "cuda/production/tile_config.hpp"

namespace strata::cuda::production {

TileKind choose_tile(int64_t n_pairs, int64_t n_expert) {
  if (const char* forced = std::getenv("STRATA_PROD_TILE")) {
    if (std::strcmp(forced, "small") == 0) return TileKind::kSmall;
    if (std::strcmp(forced, "large") == 0) return TileKind::kLarge;
    if (std::strcmp(forced, "wide") == 0) return TileKind::kWide;
  }
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
