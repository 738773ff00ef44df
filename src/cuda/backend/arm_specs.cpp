// The CUDA arms as the registry sees them (pipeline/arm_registry.hpp). Each arm's data -- the
// formats it carries as gate/up and as down, its d and f multiples, whether gate and up must
// share a format -- is derived here from the arm's own supports check over its format lists (a
// format an arm's list holds but its check refuses at every geometry is not carried), so a format
// or limit added to an arm shows in `strata-moe support` without an edit here. The check stays the
// spec's predicate, and a test compares the derived data with it over every pair of formats and a
// grid of geometries (the data model must say exactly what the check says).
#include <cuda_runtime.h>

#include <algorithm>
#include <numeric>

#include "cuda/backend/run_layer.hpp"
#include "cuda/fused/fused_arm.hpp"
#include "cuda/fused_hopper/hopper_arm.hpp"
#include "cuda/fused_q10/q10_arm.hpp"
#include "cuda/fused_q10/q10_formats.hpp"
#include "cuda/fused_wmma/wmma_arm.hpp"
#include "cuda/production/formats.hpp"
#include "pipeline/arm_registry.hpp"

namespace strata {
namespace {

using Predicate = bool (*)(const MoeLayerWeights&);

// Geometry large enough for every block size and every arm's multiple.
constexpr int64_t kBigD = 1024, kBigF = 1024;
constexpr int kMultiples[] = {32, 64, 128, 256, 512, 1024};
const uint8_t kNoData[1] = {0};

int block_values(GgmlType t) {
  return find_block_format(t)->block_values;
}

// A view of shapes and types only: the checks read no data.
MoeLayerWeights probe_layer(GgmlType gate, GgmlType up, GgmlType down, int64_t d, int64_t f) {
  MoeLayerWeights w;
  w.d = d;
  w.f = f;
  w.n_expert = 2;
  w.gate = make_expert_tensor("gate", gate, kNoData, d, f, 2);
  w.up = make_expert_tensor("up", up, kNoData, d, f, 2);
  w.down = make_expert_tensor("down", down, kNoData, f, d, 2);
  return w;
}

// The least multiple m (of kMultiples) at which the check takes every carried pair with the
// other width large; then widened to the gcd over the carried formats of lcm(m, block), which
// says the same with the blocks' own rule (d % block) beside it and reads better in the table.
template <class Layer>
int least_multiple(const std::vector<GgmlType>& carried, Predicate ok, Layer layer_at) {
  for (int m : kMultiples) {
    bool all = true;
    for (GgmlType t : carried) all = all && ok(layer_at(t, std::lcm<int64_t>(m, block_values(t))));
    if (!all) continue;
    int64_t widened = 0;
    for (GgmlType t : carried)
      widened = std::gcd<int64_t>(widened, std::lcm<int64_t>(m, block_values(t)));
    return static_cast<int>(widened);
  }
  return kMultiples[std::size(kMultiples) - 1];
}

ArmSpec derive(Arm arm, Numerics numerics, const std::vector<GgmlType>& gate_up_list,
               const std::vector<GgmlType>& down_list, bool sm90a, Predicate ok) {
  ArmSpec s;
  s.backend = Backend::kCuda;
  s.arm = arm;
  s.numerics = numerics;
  s.needs_sm90a = sm90a;
  s.predicate = ok;
  for (GgmlType g : gate_up_list)
    if (std::any_of(down_list.begin(), down_list.end(),
                    [&](GgmlType dn) { return ok(probe_layer(g, g, dn, kBigD, kBigF)); }))
      s.gate_up.push_back(g);
  for (GgmlType dn : down_list)
    if (std::any_of(s.gate_up.begin(), s.gate_up.end(),
                    [&](GgmlType g) { return ok(probe_layer(g, g, dn, kBigD, kBigF)); }))
      s.down.push_back(dn);
  if (s.gate_up.empty() || s.down.empty()) {  // carries nothing: nothing to measure
    s.gate_up.clear();
    s.down.clear();
    return s;
  }
  s.gate_up_same =
      s.gate_up.size() < 2 || !ok(probe_layer(s.gate_up[0], s.gate_up[1], s.down[0], kBigD, kBigF));
  s.d_multiple = least_multiple(s.gate_up, ok, [&](GgmlType g, int64_t d) {
    return probe_layer(g, g, s.down[0], d, std::lcm<int64_t>(kBigF, block_values(s.down[0])));
  });
  s.f_multiple = least_multiple(s.down, ok, [&](GgmlType dn, int64_t f) {
    return probe_layer(s.gate_up[0], s.gate_up[0], dn,
                       std::lcm<int64_t>(kBigD, block_values(s.gate_up[0])), f);
  });
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
  const std::vector<GgmlType> production = format_types(ProductionFormats{});
  const std::vector<GgmlType> q10_gate_up = format_types(Q10GateUpFormats{});
  const std::vector<GgmlType> q10_down = format_types(Q10DownFormats{});
  std::vector<ArmSpec> specs = {
      // ---- q8 ----
      derive(Arm::kProduction, q8, production, production, false, &cuda::production_supports),
      // Gate/up on the fused kernel, down on the production grouped GEMM.
      derive(Arm::kFusedSm80, q8, format_types(FusedGateUpFormats{}), production, false,
             &cuda::fused::fused_supports),
      derive(Arm::kFusedHopper, q8, format_types(HopperGateUpFormats{}),
             format_types(HopperDownFormats{}), true, &cuda::fused_hopper::hopper_supports),
      derive(Arm::kFusedWmma, q8, format_types(WmmaGateUpFormats{}),
             format_types(WmmaDownFormats{}), false, &cuda::fused_wmma::wmma_supports),
      // ---- q10: the lists of fused_q10/q10_formats.hpp, each kernel family's own check ----
      derive(Arm::kFusedHopper, q10, q10_gate_up, q10_down, true,
             &cuda::fused_q10::q10_hopper_supports),
      derive(Arm::kFusedSm80, q10, q10_gate_up, q10_down, false,
             &cuda::fused_q10::q10_fused_supports),
      derive(Arm::kFusedWmma, q10, q10_gate_up, q10_down, false,
             &cuda::fused_q10::q10_wmma_supports),
  };
  // An arm that carries nothing in this build is not an arm of it.
  std::erase_if(specs, [](const ArmSpec& s) { return s.gate_up.empty(); });
  return specs;
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
