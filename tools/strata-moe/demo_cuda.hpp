// The CUDA half of `strata-moe demo`: the layer and the inputs uploaded once, then each CUDA arm
// run through strata::cuda::run_layer and timed on the device (CUDA events around the call).
#pragma once
#include <string>
#include <vector>

#include "pipeline/layer.hpp"
#include "pipeline/numerics.hpp"
#include "reference/oracle.hpp"

namespace strata::cli::demo {

struct DeviceArmRun {
  std::string name;      // "production", "fused", "fused-sm80" (sm_90a only), "fused-wmma"
  double median_ms = 0;  // device time of one layer, median of the timed runs
  std::vector<float> y;  // [T, d] output of the arm's last run, copied to the host
};

struct DeviceRuns {
  std::string device;  // name of device 0
  std::vector<DeviceArmRun> arms;
};

// Production, fused (STRATA_PF_FUSED_WMMA and STRATA_PF_FUSED_HOPPER unset for the call: the
// fused-hopper arm on sm_90a), fused-sm80 (STRATA_PF_FUSED_HOPPER=0; only where the fused-hopper arm
// runs) and fused-wmma (STRATA_PF_FUSED_WMMA=1; the caller's values are restored afterwards): one warm-up
// run each, then `timed_runs` timed runs. Throws kUnsupported in a build without CUDA or on a
// machine without a visible device.
// With Numerics::kQ10: the q10 arm alone, named fused-hopper where its sm_90a kernels run, else
// fused-sm80 (mma.sync f16).
DeviceRuns run_cuda_arms(const MoeLayerWeights& host_weights, const LayerInputs& in, int timed_runs,
                         Numerics numerics = Numerics::kQ8);

}  // namespace strata::cli::demo
