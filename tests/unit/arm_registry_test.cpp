// The arm registry (pipeline/arm_registry.hpp) without a device: the data of every arm against
// its own supports check, the choice with and without the defaults, the reasons a requested arm
// did not run, and the API edge's reading of the environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "api/backend.hpp"
#include "common/error.hpp"
#include "formats/registry.hpp"
#include "pipeline/arm_registry.hpp"

namespace strata {
namespace {

const uint8_t kNoData[1] = {0};

// A layer view for the registry's checks: shapes and types only (nothing reads the data).
MoeLayerWeights layer_of(GgmlType gate_up, GgmlType down, int64_t d, int64_t f,
                         int64_t n_expert = 4) {
  MoeLayerWeights w;
  w.d = d;
  w.f = f;
  w.n_expert = n_expert;
  w.gate = make_expert_tensor("blk.0.ffn_gate_exps.weight", gate_up, kNoData, d, f, n_expert);
  w.up = make_expert_tensor("blk.0.ffn_up_exps.weight", gate_up, kNoData, d, f, n_expert);
  w.down = make_expert_tensor("blk.0.ffn_down_exps.weight", down, kNoData, f, d, n_expert);
  return w;
}

bool has_cuda() {
  return !cuda_arm_specs().empty();
}

DeviceCaps caps(bool sm90a) {
  DeviceCaps c;
  c.sm90a = sm90a;
  return c;
}

// The message of the Error fn throws (kUnsupported), or "" when it does not throw.
template <class Fn>
std::string unsupported_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kUnsupported) << e.what();
    return e.what();
  }
  return "";
}

class EnvScope {
 public:
  EnvScope(const char* name, const char* value) : name_(name) {
    EXPECT_EQ(setenv(name, value, 1), 0);
  }
  ~EnvScope() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(ArmRegistry, CpuArmsCarryEveryFormatInBothProfiles) {
  const std::vector<ArmSpec>& cpu = arm_specs(Backend::kCpu);
  ASSERT_EQ(cpu.size(), 4u);
  ASSERT_EQ(block_formats().size(), 25u);
  for (const ArmSpec& s : cpu) {
    SCOPED_TRACE(std::string(arm_name(s.arm)) + " " + numerics_name(s.numerics));
    EXPECT_EQ(s.gate_up.size(), 25u);
    EXPECT_EQ(s.down.size(), 25u);
    EXPECT_TRUE(s.arm == Arm::kProduction || s.arm == Arm::kFused);
  }
}

// Each CUDA arm's data (formats, multiples) says exactly what its own check says, over every pair
// of formats and a grid of geometries: the support matrix cannot drift from what runs.
TEST(ArmRegistry, CudaArmDataAgreesWithEachArmsOwnCheck) {
  if (!has_cuda()) GTEST_SKIP() << "built without CUDA";
  int64_t compared = 0, carried = 0;
  for (const ArmSpec& s : cuda_arm_specs()) {
    SCOPED_TRACE(std::string(arm_name(s.arm)) + " " + numerics_name(s.numerics));
    ASSERT_NE(s.predicate, nullptr);
    for (const FormatInfo& g : block_formats())
      for (const FormatInfo& dn : block_formats())
        for (int64_t d = 32; d <= 1024; d += 32)
          for (int64_t f = 32; f <= 512; f += 32) {
            if (d % g.block_values != 0 || f % dn.block_values != 0) continue;
            const MoeLayerWeights w = layer_of(g.type, dn.type, d, f);
            ArmSpec data_only = s;
            data_only.predicate = nullptr;
            const bool by_data = !why_not(data_only, w, caps(true)).has_value();
            const bool own = s.predicate(w);
            ASSERT_EQ(by_data, own) << g.name << " / " << dn.name << " d = " << d << " f = " << f;
            ++compared;
            carried += own;
          }
  }
  EXPECT_GT(carried, 0);
  std::printf("%lld layers compared, %lld carried\n", static_cast<long long>(compared),
              static_cast<long long>(carried));
}

TEST(ArmRegistry, ALayerACudaArmCannotCarryGetsTheReasonWithoutADevice) {
  if (!has_cuda()) GTEST_SKIP() << "built without CUDA";
  const MoeLayerWeights geometry = layer_of(GgmlType::IQ3_S, GgmlType::Q2_0, 512 + 256, 192);
  for (const ArmSpec& s : cuda_arm_specs())
    if (s.arm == Arm::kFusedHopper && s.numerics == Numerics::kQ8) {
      EXPECT_FALSE(why_not(s, geometry, caps(true)).has_value()) << "768 % 256 == 0";
      const std::optional<std::string> no_device = why_not(s, geometry, caps(false));
      ASSERT_TRUE(no_device.has_value());
      EXPECT_NE(no_device->find("sm_90a"), std::string::npos) << *no_device;
    }
  // A type no CUDA arm carries under q8: refused naming the arm, the tensor and the type.
  const MoeLayerWeights q8_0 = layer_of(GgmlType::Q8_0, GgmlType::Q8_0, 256, 128);
  for (const ArmSpec& s : cuda_arm_specs()) {
    if (s.numerics != Numerics::kQ8) continue;
    const std::optional<std::string> reason = why_not(s, q8_0, caps(false));
    ASSERT_TRUE(reason.has_value()) << arm_name(s.arm);
    EXPECT_NE(reason->find(arm_name(s.arm)), std::string::npos) << *reason;
    EXPECT_NE(reason->find("q8_0"), std::string::npos) << *reason;
    EXPECT_NE(reason->find("blk.0.ffn_gate_exps.weight"), std::string::npos) << *reason;
  }
  const std::string message = unsupported_message(
      [&] { choose_arm(cuda_arm_specs(), q8_0, caps(false), Arm::kFused, Numerics::kQ8); });
  EXPECT_NE(message.find("no arm of the cuda backend carries it"), std::string::npos) << message;
  EXPECT_NE(message.find("production (cuda q8) does not carry gate q8_0"), std::string::npos)
      << message;
}

TEST(ArmRegistry, CudaChoiceWithAndWithoutDefaults) {
  if (!has_cuda()) GTEST_SKIP() << "built without CUDA";
  const std::vector<ArmSpec>& arms = cuda_arm_specs();
  const MoeLayerWeights w = layer_of(GgmlType::IQ3_S, GgmlType::Q2_0, 512, 192);
  // Nothing named: q10 (a q10 arm carries the layer), on its best kernels for the device.
  ArmChoice c = choose_arm(arms, w, caps(false), std::nullopt, std::nullopt);
  EXPECT_EQ(c.report.numerics, Numerics::kQ10);
  EXPECT_EQ(c.report.arm, Arm::kFusedSm80);
  EXPECT_EQ(c.report.fallback, "");
  c = choose_arm(arms, w, caps(true), std::nullopt, std::nullopt);
  EXPECT_EQ(c.report.arm, Arm::kFusedHopper);
  EXPECT_EQ(c.spec->numerics, Numerics::kQ10);
  // q8 named, no arm: production.
  c = choose_arm(arms, w, caps(true), std::nullopt, Numerics::kQ8);
  EXPECT_EQ(c.report.arm, Arm::kProduction);
  // fused: the best fused kernels of the device, no fallback note.
  c = choose_arm(arms, w, caps(true), Arm::kFused, Numerics::kQ8);
  EXPECT_EQ(c.report.arm, Arm::kFusedHopper);
  EXPECT_EQ(c.report.fallback, "");
  c = choose_arm(arms, w, caps(false), Arm::kFused, Numerics::kQ8);
  EXPECT_EQ(c.report.arm, Arm::kFusedSm80);
  EXPECT_EQ(c.report.fallback, "");
  // Every named arm runs as named where it carries the layer.
  for (Arm a : {Arm::kProduction, Arm::kFusedSm80, Arm::kFusedHopper, Arm::kFusedWmma}) {
    c = choose_arm(arms, w, caps(true), a, Numerics::kQ8);
    EXPECT_EQ(c.report.arm, a);
    EXPECT_EQ(c.report.fallback, "");
  }
  // production named, no profile: CUDA has no q10 production arm, so q8 production.
  c = choose_arm(arms, w, caps(true), Arm::kProduction, std::nullopt);
  EXPECT_EQ(c.report.arm, Arm::kProduction);
  EXPECT_EQ(c.report.numerics, Numerics::kQ8);
  // fused named, no profile: q10's fused kernels.
  c = choose_arm(arms, w, caps(true), Arm::kFused, std::nullopt);
  EXPECT_EQ(c.report.arm, Arm::kFusedHopper);
  EXPECT_EQ(c.report.numerics, Numerics::kQ10);
  // production named under q10: falls back to q10's fused kernels and says why.
  c = choose_arm(arms, w, caps(false), Arm::kProduction, Numerics::kQ10);
  EXPECT_EQ(c.report.arm, Arm::kFusedSm80);
  EXPECT_NE(c.report.fallback.find("no production arm under q10"), std::string::npos)
      << c.report.fallback;
  // fused-hopper named without the device: fused-sm80, and the reason names the device.
  c = choose_arm(arms, w, caps(false), Arm::kFusedHopper, Numerics::kQ8);
  EXPECT_EQ(c.report.arm, Arm::kFusedSm80);
  EXPECT_NE(c.report.fallback.find("sm_90a"), std::string::npos) << c.report.fallback;
  // Formats fused-wmma does not carry: production, and the reason names the arm and the type.
  const MoeLayerWeights narrow = layer_of(GgmlType::Q2_0, GgmlType::Q2_0, 320, 192);
  c = choose_arm(arms, narrow, caps(true), Arm::kFusedWmma, Numerics::kQ8);
  EXPECT_EQ(c.report.arm, Arm::kProduction);
  EXPECT_NE(c.report.fallback.find("fused-wmma (cuda q8) does not carry gate q2_0"),
            std::string::npos)
      << c.report.fallback;
}

TEST(ArmRegistry, CpuChoiceAndReport) {
  const std::vector<ArmSpec>& arms = arm_specs(Backend::kCpu);
  const MoeLayerWeights w = layer_of(GgmlType::Q4_K, GgmlType::Q6_K, 256, 256);
  ArmChoice c = choose_arm(arms, w, DeviceCaps{}, std::nullopt, std::nullopt);
  EXPECT_EQ(c.report.arm, Arm::kProduction);
  EXPECT_EQ(c.report.numerics, Numerics::kQ10)
      << "q10 is the default where an arm carries the layer";
  c = choose_arm(arms, w, DeviceCaps{}, Arm::kFused, Numerics::kQ8);
  EXPECT_EQ(c.report.arm, Arm::kFused);
  EXPECT_EQ(c.report.numerics, Numerics::kQ8);
  // A CUDA arm named on the CPU backend: the CPU fused arm, and the report says why.
  c = choose_arm(arms, w, DeviceCaps{}, Arm::kFusedHopper, std::nullopt);
  EXPECT_EQ(c.report.arm, Arm::kFused);
  EXPECT_NE(c.report.fallback.find("the cpu backend has no fused-hopper arm"), std::string::npos)
      << c.report.fallback;
  // Through the backend object: choose() is what run() reports.
  const std::unique_ptr<LayerBackend> backend =
      make_cpu_backend(layer_of(GgmlType::Q4_K, GgmlType::Q6_K, 256, 256));
  RunOptions options;
  options.arm = Arm::kFused;
  EXPECT_EQ(backend->choose(options).arm, Arm::kFused);
  EXPECT_EQ(backend->choose(options).numerics, Numerics::kQ10);
}

TEST(ArmRegistry, EnvironmentIsReadAtTheEdgeAndBadValuesAreRefusedByName) {
  for (const char* v : {"STRATA_PF_FUSED", "STRATA_PF_FUSED_WMMA", "STRATA_PF_FUSED_HOPPER",
                        "STRATA_PF_Q10_HOPPER", "STRATA_PF_FUSED_NATIVE", "STRATA_NUMERICS"})
    ASSERT_EQ(unsetenv(v), 0);
  EnvDefaults e = defaults_from_env();
  EXPECT_FALSE(e.arm.has_value());
  EXPECT_FALSE(e.numerics.has_value());
  {
    const EnvScope fused("STRATA_PF_FUSED", "1");
    EXPECT_EQ(defaults_from_env().arm, Arm::kFused);
    {
      const EnvScope sm80("STRATA_PF_FUSED_HOPPER", "0");
      EXPECT_EQ(defaults_from_env().arm, Arm::kFusedSm80);
    }
    {
      const EnvScope wmma("STRATA_PF_FUSED_WMMA", "1");
      EXPECT_EQ(defaults_from_env().arm, Arm::kFusedWmma);
    }
    {
      const EnvScope native("STRATA_PF_FUSED_NATIVE", "0");
      EXPECT_EQ(defaults_from_env().arm, Arm::kProduction);
    }
  }
  {
    const EnvScope production("STRATA_PF_FUSED", "0");
    const EnvScope wmma("STRATA_PF_FUSED_WMMA", "1");
    EXPECT_EQ(defaults_from_env().arm, Arm::kProduction) << "STRATA_PF_FUSED=0 wins";
  }
  {
    const EnvScope q10_sm80("STRATA_PF_Q10_HOPPER", "0");
    EXPECT_EQ(defaults_from_env().arm, Arm::kFusedSm80);
  }
  {
    const EnvScope q10("STRATA_NUMERICS", "q10");
    EXPECT_EQ(defaults_from_env().numerics, Numerics::kQ10);
  }
  for (const char* name : {"STRATA_PF_FUSED", "STRATA_PF_FUSED_WMMA", "STRATA_PF_FUSED_HOPPER",
                           "STRATA_PF_Q10_HOPPER", "STRATA_PF_FUSED_NATIVE", "STRATA_NUMERICS"}) {
    SCOPED_TRACE(name);
    const EnvScope bad(name, "yes");
    try {
      defaults_from_env();
      ADD_FAILURE() << "a bad value was accepted";
    } catch (const Error& err) {
      EXPECT_EQ(err.status(), Status::kInvalidArgument);
      EXPECT_NE(std::string(err.what()).find(name), std::string::npos) << err.what();
    }
  }
}

}  // namespace
}  // namespace strata
