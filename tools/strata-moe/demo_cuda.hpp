// The CUDA half of `strata-moe demo`: the layer and the inputs uploaded once, then each CUDA arm
// run through strata::cuda::run_layer and timed on the device (CUDA events around the call).
#pragma once
#include <string>
#include <vector>

#include "pipeline/layer.hpp"
#include "pipeline/numerics.hpp"
#include "pipeline/run.hpp"

namespace strata::cli::demo {

struct DeviceArmRun {
  std::string name;      // the arm that ran: "production", "fused-hopper", "fused-sm80", "fused-wmma"
  double median_ms = 0;  // device time of one layer, median of the timed runs
  std::vector<float> y;  // [T, d] output of the arm's last run, copied to the host
};

struct DeviceRuns {
  std::string device;  // name of device 0
  std::vector<DeviceArmRun> arms;
};

// Every CUDA arm of the profile that carries the layer on this device, named as the registry chose
// it (production, fused-hopper where it runs, fused-sm80, fused-wmma; under q10 there is no
// production arm): one warm-up run each, then `timed_runs` timed runs. Throws kUnsupported in a
// build without CUDA or on a machine without a visible device.
DeviceRuns run_cuda_arms(const MoeLayerWeights& host_weights, const LayerInputs& in, int timed_runs,
                         Numerics numerics = Numerics::kQ8);

}  // namespace strata::cli::demo
