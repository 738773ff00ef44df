#include "cuda/fused_wmma/launch_chain.hpp"
#include "cuda/fused_wmma/tile_config.hpp"

namespace strata::cuda::fused_wmma {

int chain_tile_pairs() {
  return ChainTileDefault::kPairs;
}

}  // namespace strata::cuda::fused_wmma
