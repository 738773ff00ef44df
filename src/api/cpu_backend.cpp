#include <cstdlib>
#include <cstring>
#include <string>

#include "api/backend.hpp"
#include "common/env.hpp"
#include "common/error.hpp"

namespace strata {
namespace {

class CpuBackend final : public LayerBackend {
 public:
  explicit CpuBackend(const MoeLayerWeights& weights) : weights_(weights) {
    validate_layer(weights_);
  }
  const char* name() const override { return "cpu"; }
  void run(const LayerInputs& in, Arm arm, const RunOptions& options, float* y) override {
    run_layer_cpu(weights_, in, arm, options.threads, y, nullptr, options.numerics);
  }

 private:
  MoeLayerWeights weights_;
};

}  // namespace

std::unique_ptr<LayerBackend> make_cpu_backend(const MoeLayerWeights& weights) {
  return std::make_unique<CpuBackend>(weights);
}

std::unique_ptr<LayerBackend> make_host_memory_backend(std::string_view backend,
                                                       const MoeLayerWeights& host_weights) {
  if (backend == "cpu") return make_cpu_backend(host_weights);
  if (backend == "cuda") return make_cuda_host_backend(host_weights);
  fail(Status::kInvalidArgument,
       "--backend: unknown backend '" + std::string(backend) + "' (cpu or cuda)");
}

Arm arm_from_env() {
  return env_equals("STRATA_PF_FUSED", "1") ? Arm::kFused : Arm::kProduction;
}

Numerics numerics_from_env() {
  const char* value = std::getenv("STRATA_NUMERICS");
  if (value == nullptr || *value == '\0') return Numerics::kQ8;
  const std::optional<Numerics> parsed = parse_numerics(value);
  require(parsed.has_value(), Status::kInvalidArgument,
          "STRATA_NUMERICS: '" + std::string(value) + "' is not a profile (q8 or q10)");
  return *parsed;
}

}  // namespace strata
