// Tiles per expert under the synthetic uniform and skewed routings (qwen35-a3b: E = 256, k = 8).
#include <cstdio>
#include <vector>
#include "synth/synth.hpp"
int main() {
  for (int skewed = 0; skewed < 2; ++skewed)
  for (long T : {512L, 4096L, 16384L}) {
    long t128 = 0, t192 = 0, t256 = 0, used = 0, pairs = 0, seeds = 0;
    for (uint64_t seed = 1; seed <= 8; ++seed, ++seeds) {
      auto r = skewed ? strata::synth::skewed_routing(T, 256, 8, seed) : strata::synth::uniform_routing(T, 256, 8, seed);
      std::vector<long> n(256, 0);
      for (int id : r.ids) ++n[id];
      for (long c : n) {
        if (c == 0) continue;
        ++used; pairs += c;
        t128 += (c + 127) / 128; t192 += (c + 191) / 192; t256 += (c + 255) / 256;
      }
    }
    std::printf("%s T=%5ld: experts used %.1f, pairs/expert %.1f, tiles per used expert: 128 -> %.3f, 192 -> %.3f, 256 -> %.3f\n",
                skewed ? "skewed " : "uniform", T, double(used) / seeds, double(pairs) / used, double(t128) / used,
                double(t192) / used, double(t256) / used);
  }
}
