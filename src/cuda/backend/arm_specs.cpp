// The CUDA arms as the registry sees them (pipeline/arm_registry.hpp): each arm's formats come
// from its own format lists and its limits from its tile shapes; its own supports check is kept
// as the predicate, so the data and the check are compared by a test.
#include <cuda_runtime.h>

#include "cuda/backend/run_layer.hpp"
#include "cuda/fused/fused_arm.hpp"
#include "cuda/fused_hopper/hopper_arm.hpp"
#include "cuda/fused_hopper/tile_config.hpp"
#include "cuda/fused_q10/q10_arm.hpp"
#include "cuda/fused_q10/q10_formats.hpp"
#include "cuda/fused_wmma/wmma_arm.hpp"
#include "cuda/production/formats.hpp"
#include "pipeline/arm_registry.hpp"

namespace strata {
namespace {

ArmSpec spec(Arm arm, Numerics numerics, std::vector<GgmlType> gate_up, std::vector<GgmlType> down, bool same,
             int d_multiple, int f_multiple, bool sm90a, bool (*predicate)(const MoeLayerWeights&)) {
  ArmSpec s;
  s.backend = Backend::kCuda;
  s.arm = arm;
  s.numerics = numerics;
  s.gate_up = std::move(gate_up);
  s.down = std::move(down);
  s.gate_up_same = same;
  s.d_multiple = d_multiple;
  s.f_multiple = f_multiple;
  s.needs_sm90a = sm90a;
  s.predicate = predicate;
  return s;
}

std::vector<ArmSpec> make_cuda_specs() {
  using cuda::fused::FusedGateUpFormats;
  using cuda::fused_hopper::HopperDownFormats;
  using cuda::fused_hopper::HopperGateUpFormats;
  using cuda::fused_q10::Q10DownFormats;
  using cuda::fused_q10::Q10GateUpFormats;
  using cuda::fused_wmma::WmmaDownFormats;
  using cuda::fused_wmma::WmmaGateUpFormats;
  using cuda::production::ProductionFormats;
  constexpr Numerics q8 = Numerics::kQ8, q10 = Numerics::kQ10;
  return {
      // ---- q8 ----
      spec(Arm::kProduction, q8, format_types(ProductionFormats{}), format_types(ProductionFormats{}), false, 32,
           32, false, &cuda::production_supports),
      // Gate/up on the fused kernel, down on the production grouped GEMM.
      spec(Arm::kFusedSm80, q8, format_types(FusedGateUpFormats{}), format_types(ProductionFormats{}), true, 64, 32,
           false, &cuda::fused::fused_supports),
      spec(Arm::kFusedHopper, q8, format_types(HopperGateUpFormats{}), format_types(HopperDownFormats{}), true,
           cuda::fused_hopper::kGateUpStageValues, cuda::fused_hopper::kDownStageValues, true,
           &cuda::fused_hopper::hopper_supports),
      spec(Arm::kFusedWmma, q8, format_types(WmmaGateUpFormats{}), format_types(WmmaDownFormats{}), true, 32, 32,
           false, &cuda::fused_wmma::wmma_supports),
      // ---- q10: one format list for the three kernel families (fused_q10/q10_formats.hpp) ----
      spec(Arm::kFusedHopper, q10, format_types(Q10GateUpFormats{}), format_types(Q10DownFormats{}), true,
           cuda::fused_q10::kQ10HopperDMultiple, cuda::fused_q10::kQ10FMultiple, true,
           &cuda::fused_q10::q10_hopper_supports),
      spec(Arm::kFusedSm80, q10, format_types(Q10GateUpFormats{}), format_types(Q10DownFormats{}), true,
           cuda::fused_q10::kQ10DMultiple, cuda::fused_q10::kQ10FMultiple, false,
           &cuda::fused_q10::q10_fused_supports),
      spec(Arm::kFusedWmma, q10, format_types(Q10GateUpFormats{}), format_types(Q10DownFormats{}), true,
           cuda::fused_q10::kQ10DMultiple, cuda::fused_q10::kQ10FMultiple, false,
           &cuda::fused_q10::q10_fused_supports),
  };
}

}  // namespace

DeviceCaps cuda_device_caps() {
  DeviceCaps caps;
  caps.sm90a = cuda::fused_hopper::hopper_available();
  return caps;
}

const std::vector<ArmSpec>& cuda_arm_specs() {
  static const std::vector<ArmSpec> specs = make_cuda_specs();
  return specs;
}

}  // namespace strata
