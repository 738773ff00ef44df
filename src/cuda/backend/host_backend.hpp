// A CUDA LayerBackend for callers holding host memory (the CLI, tools): the weights are copied to
// the device once (each tensor at the start of its allocation: 16-byte aligned), and run() takes host
// x/ids/weights, returns host y (it synchronises; the routing is validated on the host first).
#pragma once
#include <memory>

#include "api/backend.hpp"

namespace strata::cuda {

std::unique_ptr<LayerBackend> make_host_backend(const MoeLayerWeights& host_weights);

}  // namespace strata::cuda
