// The arm registry: every arm of every backend of this build, each described as data -- the
// formats it carries as gate/up and as down, its geometry limits, what it needs of the device --
// that its supports check (why_not) reads and that `strata-moe support` prints, so the two cannot
// drift. The dispatcher of each backend chooses once per call with choose_arm() and reports what
// ran (RunReport) and why a requested arm did not.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "formats/ggml_type.hpp"
#include "formats/registry.hpp"
#include "pipeline/layer.hpp"
#include "pipeline/numerics.hpp"
#include "pipeline/run.hpp"

namespace strata {

enum class Backend { kCpu, kCuda };

constexpr const char* backend_name(Backend b) {
  return b == Backend::kCuda ? "cuda" : "cpu";
}

// What the device offers the arms; the CUDA backend fills it (cuda_device_caps()), tests by hand.
struct DeviceCaps {
  bool sm90a = false;  // an sm_90 device and the build's sm_90a image: the Hopper kernels load
};

// One arm of one backend in one profile.
struct ArmSpec {
  Backend backend = Backend::kCpu;
  Arm arm = Arm::kProduction;
  Numerics numerics = Numerics::kQ8;
  std::vector<GgmlType> gate_up;  // formats carried as gate and up
  std::vector<GgmlType> down;     // formats carried as down
  bool gate_up_same = false;      // gate and up must share one format
  int d_multiple = 32;            // d % d_multiple == 0 (the formats' block sizes apply besides)
  int f_multiple = 32;            // f % f_multiple == 0
  bool needs_sm90a = false;       // DeviceCaps::sm90a
  // The arm's own check where its code keeps one (it must agree with the data above; a test
  // compares them over every carried format and a grid of geometries). Null: the data alone.
  bool (*predicate)(const MoeLayerWeights& layer) = nullptr;
};

// The formats of a FormatList, as data.
template <class... F>
std::vector<GgmlType> format_types(FormatList<F...>) {
  return {F::kType...};
}

// nullopt when `spec` carries the layer on `device`; else why not, naming the arm, the tensor and
// its type or the limit. The formats and geometry are checked before the device, so a layer an
// arm cannot carry gets its reason on a machine without one.
std::optional<std::string> why_not(const ArmSpec& spec, const MoeLayerWeights& layer,
                                   const DeviceCaps& device);

// The arms of a backend in this build: CPU production and fused in both profiles; the CUDA arms
// (empty in a build without CUDA; src/cuda/backend/arm_specs.cpp).
const std::vector<ArmSpec>& arm_specs(Backend backend);
const std::vector<ArmSpec>& cuda_arm_specs();
// The CUDA device's capabilities (no device, or a build without CUDA: none).
DeviceCaps cuda_device_caps();

struct ArmChoice {
  const ArmSpec* spec = nullptr;
  RunReport report;
};

// The one choice of a call, over the arms of one backend:
//  - profiles tried: the named one, else q10 then q8 (q10 wins where an arm of the request carries
//    the layer);
//  - arms tried: the named one (Arm::kFused: fused-hopper, fused-sm80, then the CPU fused arm),
//    else the profile's default (production, then fused-hopper, fused-sm80);
//  - a named arm that carries nothing here falls back to fused-hopper, fused-sm80, fused,
//    production (first that carries the layer), and the report says why.
// Throws Error(kUnsupported) naming the layer and each arm's reason when no arm carries it.
ArmChoice choose_arm(const std::vector<ArmSpec>& arms, const MoeLayerWeights& layer,
                     const DeviceCaps& device, std::optional<Arm> arm,
                     std::optional<Numerics> numerics);

}  // namespace strata
