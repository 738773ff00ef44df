#include <string>

#include "api/backend.hpp"
#include "common/error.hpp"
#include "cpu/moe_cpu.hpp"

namespace strata {
namespace {

class CpuBackend final : public LayerBackend {
 public:
  explicit CpuBackend(const MoeLayerWeights& weights) : weights_(weights) {
    validate_layer(weights_);
  }
  const char* name() const override { return "cpu"; }
  RunReport choose(const RunOptions& options) const override {
    return choose_arm(arm_specs(Backend::kCpu), weights_, DeviceCaps{}, options.arm, options.numerics).report;
  }
  RunReport run(const LayerInputs& in, const RunOptions& options, float* y) override {
    const RunReport ran = choose(options);
    run_layer_cpu(weights_, in, ran.arm, options.threads, y, nullptr, ran.numerics);
    return ran;
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

}  // namespace strata
