// What one layer run is given and what it says back, shared by every backend, the API and the
// tools: the arms, the inputs, the options a call names and the report of what ran.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pipeline/numerics.hpp"

namespace strata {

// The arms. Every arm of a profile computes that profile's bits (docs/numerics.md): they differ in
// speed, and in the formats and geometries they carry (the arm registry,
// pipeline/arm_registry.hpp).
enum class Arm {
  kProduction,   // stage by stage (CPU, CUDA)
  kFused,        // the backend's fused kernels: the CPU fused arm; on CUDA fused-hopper where it
                 // runs, else fused-sm80
  kFusedSm80,    // CUDA: mma.sync kernels (sm_80 and later)
  kFusedHopper,  // CUDA: bulk copies and wgmma (an sm_90 device and the build's sm_90a image)
  kFusedWmma,    // CUDA: the 16x16x16 tile primitive
};

inline constexpr Arm kAllArms[] = {Arm::kProduction, Arm::kFused, Arm::kFusedSm80,
                                   Arm::kFusedHopper, Arm::kFusedWmma};

constexpr const char* arm_name(Arm arm) {
  switch (arm) {
    case Arm::kProduction:
      return "production";
    case Arm::kFused:
      return "fused";
    case Arm::kFusedSm80:
      return "fused-sm80";
    case Arm::kFusedHopper:
      return "fused-hopper";
    case Arm::kFusedWmma:
      return "fused-wmma";
  }
  return "?";
}

// "production", "fused", "fused-sm80", "fused-hopper", "fused-wmma"; nullopt for anything else.
constexpr std::optional<Arm> parse_arm(std::string_view name) {
  for (Arm arm : kAllArms)
    if (name == arm_name(arm)) return arm;
  return std::nullopt;
}

// The known arm names, for messages: "production, fused, fused-sm80, fused-hopper, fused-wmma".
inline std::string arm_names() {
  std::string out;
  for (Arm arm : kAllArms) out += (out.empty() ? "" : ", ") + std::string(arm_name(arm));
  return out;
}

struct LayerInputs {
  const float* x = nullptr;        // [T, d]
  const int32_t* ids = nullptr;    // [T, k]
  const float* weights = nullptr;  // [T, k]
  int64_t n_tokens = 0;
  int k = 0;
};

// What a call asks for. An arm or profile left unset takes the default: no environment is read
// below the API edge (src/api/env_defaults.cpp turns the variables into these fields).
struct RunOptions {
  int threads = 0;              // CPU threads; <= 0: the OpenMP default
  void* cuda_stream = nullptr;  // cudaStream_t (CUDA backend)
  // Unset: the backend's default arm of the profile (production; on CUDA under q10, fused).
  std::optional<Arm> arm;
  // Unset: q10 where the backend has a q10 arm for the layer (the named arm's, when one is named),
  // else q8.
  std::optional<Numerics> numerics;
  // The backend's scratch for this run (scratch_bytes of it, in the backend's memory), or null:
  // the backend's own buffers.
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
};

// What ran: the arm (on CUDA a concrete kernel family: a fused request says fused-hopper or
// fused-sm80), the profile, and why the requested arm did not run ("" when it did).
struct RunReport {
  Arm arm = Arm::kProduction;
  Numerics numerics = Numerics::kQ8;
  std::string fallback;  // e.g. "fused-wmma: does not carry gate q4_k ..."; "" when the request ran
};

}  // namespace strata
