// The gated activations an expert FFN applies between gate/up and down, host and device.
//
// NOTE: part of the numerics like arith.hpp: explicit IEEE fp32 steps, so every arm and backend
// gives the same bits.
#pragma once
#include <cmath>
#include <cstdint>

#include "common/hd.hpp"
#include "pipeline/arith.hpp"

namespace strata {

enum class ActivationKind : uint8_t {
  kSwiGLU,     // silu(g) * u                                           (every SwiGLU MoE)
  kSwiGLUOai,  // min(g, L) * sigmoid(alpha min(g, L)) * (clamp(u, -L, L) + 1)   (gpt-oss)
};

struct Activation {
  ActivationKind kind = ActivationKind::kSwiGLU;
  float alpha = 1.702f;  // SwiGLU-OAI only: the sigmoid's slope (llama.cpp's constant)
  float limit = 7.0f;    // SwiGLU-OAI only: g clamped above at limit, u to [-limit, limit]
};

STRATA_HD_INLINE float sigmoid_f32(float x) {
  return 1.0f / (1.0f + exp_f32(-x));
}

// h = act(g, u) for one feature; g and u already carry their biases.
STRATA_HD_INLINE float activate(const Activation& a, float g, float u) {
  if (a.kind == ActivationKind::kSwiGLU) return swiglu(g, u);
  const float x = fminf(g, a.limit);
  const float y = fminf(fmaxf(u, -a.limit), a.limit);
  return (x / (1.0f + exp_f32(-(a.alpha * x)))) * (y + 1.0f);
}

inline const char* activation_name(ActivationKind kind) {
  return kind == ActivationKind::kSwiGLU ? "swiglu" : "swiglu-oai";
}

}  // namespace strata
