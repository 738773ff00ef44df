#include "pipeline/arm_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "common/error.hpp"

namespace strata {
namespace {

bool contains(const std::vector<GgmlType>& list, GgmlType type) {
  return std::find(list.begin(), list.end(), type) != list.end();
}

std::string type_names(const std::vector<GgmlType>& list) {
  std::vector<std::string> names;
  for (GgmlType t : list) names.emplace_back(ggml_type_name(t));
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

std::string arm_label(const ArmSpec& s) {
  return fmt::format("{} ({} {})", arm_name(s.arm), backend_name(s.backend),
                     numerics_name(s.numerics));
}

std::vector<ArmSpec> make_cpu_specs() {
  std::vector<ArmSpec> specs;
  for (Numerics n : {Numerics::kQ8, Numerics::kQ10}) {
    std::vector<GgmlType> carried;
    for (const FormatInfo& f : block_formats())
      if (n == Numerics::kQ10 ? f.wide : f.int8) carried.push_back(f.type);
    for (Arm arm : {Arm::kProduction, Arm::kFused}) {
      ArmSpec s;
      s.backend = Backend::kCpu;
      s.arm = arm;
      s.numerics = n;
      s.gate_up = carried;
      s.down = carried;
      specs.push_back(std::move(s));
    }
  }
  return specs;
}

const ArmSpec* find_spec(const std::vector<ArmSpec>& arms, Arm arm, Numerics n) {
  for (const ArmSpec& s : arms)
    if (s.arm == arm && s.numerics == n) return &s;
  return nullptr;
}

// The arms a request names: Arm::kFused is the backend's fused family, best first.
std::vector<Arm> family(Arm arm) {
  if (arm == Arm::kFused) return {Arm::kFusedHopper, Arm::kFusedSm80, Arm::kFused};
  return {arm};
}

}  // namespace

std::optional<std::string> why_not(const ArmSpec& spec, const MoeLayerWeights& layer,
                                   const DeviceCaps& device) {
  const std::string label = arm_label(spec);
  const auto not_carried = [&](const ExpertTensor& t, const char* role,
                               const std::vector<GgmlType>& list) {
    return fmt::format("{} does not carry {} {} (tensor '{}'; it carries {})", label, role,
                       ggml_type_name(t.type), t.name, type_names(list));
  };
  if (!contains(spec.gate_up, layer.gate.type))
    return not_carried(layer.gate, "gate", spec.gate_up);
  if (!contains(spec.gate_up, layer.up.type)) return not_carried(layer.up, "up", spec.gate_up);
  if (spec.gate_up_same && layer.gate.type != layer.up.type)
    return fmt::format("{} needs gate and up in one format (gate {}, up {})", label,
                       ggml_type_name(layer.gate.type), ggml_type_name(layer.up.type));
  if (!contains(spec.down, layer.down.type)) return not_carried(layer.down, "down", spec.down);
  if (layer.d % spec.d_multiple != 0 || layer.f % spec.f_multiple != 0)
    return fmt::format("{} needs d % {} == 0 and f % {} == 0 (d = {}, f = {})", label,
                       spec.d_multiple, spec.f_multiple, layer.d, layer.f);
  if (spec.predicate != nullptr && !spec.predicate(layer))
    return fmt::format(
        "{} does not carry the layer (its own check refuses gate {} / up {} / down {}, d = {}, f = "
        "{})",
        label, ggml_type_name(layer.gate.type), ggml_type_name(layer.up.type),
        ggml_type_name(layer.down.type), layer.d, layer.f);
  if (spec.needs_sm90a && !device.sm90a)
    return fmt::format("{} needs an sm_90 device and the build's sm_90a image", label);
  return std::nullopt;
}

const std::vector<ArmSpec>& arm_specs(Backend backend) {
  static const std::vector<ArmSpec> cpu = make_cpu_specs();
  return backend == Backend::kCuda ? cuda_arm_specs() : cpu;
}

ArmChoice choose_arm(const std::vector<ArmSpec>& arms, const MoeLayerWeights& layer,
                     const DeviceCaps& device, std::optional<Arm> arm,
                     std::optional<Numerics> numerics) {
  const std::vector<Numerics> profiles = numerics
                                             ? std::vector<Numerics>{*numerics}
                                             : std::vector<Numerics>{Numerics::kQ10, Numerics::kQ8};
  const std::vector<Arm> asked =
      arm ? family(*arm) : std::vector<Arm>{Arm::kProduction, Arm::kFusedHopper, Arm::kFusedSm80};
  const char* backend = arms.empty() ? "this" : backend_name(arms.front().backend);
  std::vector<std::string> reasons;
  for (Numerics n : profiles) {
    bool any = false;
    for (Arm a : asked) {
      const ArmSpec* spec = find_spec(arms, a, n);
      if (spec == nullptr) continue;
      any = true;
      const std::optional<std::string> reason = why_not(*spec, layer, device);
      if (!reason) return {spec, RunReport{a, n, ""}};
      reasons.push_back(*reason);
    }
    if (!any && arm)
      reasons.push_back(fmt::format("the {} backend has no {} arm under {}", backend,
                                    arm_name(*arm), numerics_name(n)));
  }
  if (arm) {
    const std::string why = fmt::format("{}", fmt::join(reasons, "; "));
    for (Numerics n : profiles)
      for (Arm a : {Arm::kFusedHopper, Arm::kFusedSm80, Arm::kFused, Arm::kProduction}) {
        const std::vector<Arm>& tried = asked;
        if (std::find(tried.begin(), tried.end(), a) != tried.end()) continue;
        const ArmSpec* spec = find_spec(arms, a, n);
        if (spec == nullptr) continue;
        const std::optional<std::string> reason = why_not(*spec, layer, device);
        if (!reason) return {spec, RunReport{a, n, why}};
        reasons.push_back(*reason);
      }
  }
  if (reasons.empty())
    reasons.push_back(fmt::format("the {} backend has no arm under {}", backend,
                                  numerics ? numerics_name(*numerics) : "q8 or q10"));
  fail(Status::kUnsupported, fmt::format("layer '{}': no arm of the {} backend carries it ({})",
                                         layer.gate.name, backend, fmt::join(reasons, "; ")));
}

}  // namespace strata
