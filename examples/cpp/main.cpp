// strata-moe from C++: the RAII layer, f32 activations, both numerics profiles.
// Usage: example_cpp MODEL.gguf
#include <strata_moe.h>
#include <strata_moe/layer.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: %s MODEL.gguf\n", argv[0]), 2;
  strata_moe_gguf* file = nullptr;
  strata_moe_gguf_layer info{};
  info.struct_size = sizeof info;
  try {
    strata_moe::check(strata_moe_gguf_open(argv[1], &file));
    strata_moe::check(strata_moe_gguf_layer_info(file, 1, &info));
    strata_moe::Layer layer(STRATA_MOE_BACKEND_CPU, info.desc);
    const int64_t T = 16, d = info.desc.d;
    const int k = info.n_expert_used;
    std::vector<float> x(T * d), y(T * d), weights(T * k);
    std::vector<int32_t> ids(T * k);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 104729) % 331) / 165.0f - 1.0f;
    strata_moe::route(info.router, x.data(), T, d, info.desc.n_expert, k, STRATA_MOE_GATING_SOFTMAX_TOPK_RENORM,
                      ids.data(), weights.data());
    for (auto numerics : {STRATA_MOE_NUMERICS_Q8, STRATA_MOE_NUMERICS_Q10}) {
      strata_moe_run_options options = strata_moe::run_options();
      options.numerics = numerics;
      layer.run(x.data(), ids.data(), weights.data(), T, k, y.data(), &options);
      double sum = 0;
      for (float v : y) sum += v;
      std::printf("layer %d %s: sum(y) = %.6f\n", info.layer, numerics == STRATA_MOE_NUMERICS_Q8 ? "q8" : "q10", sum);
    }
  } catch (const strata_moe::Error& e) {
    std::fprintf(stderr, "strata_moe: %s\n", e.what());
    strata_moe_gguf_close(file);
    return 1;
  }
  strata_moe_gguf_close(file);
  return 0;
}
