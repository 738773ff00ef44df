// The block formats the CUDA production arm carries: its registration table. Adding a format is
// one entry here; its kernels are instantiated by gemm_formats.cu and read the weights through
// blocks::DeviceDecoder<F> (the generic decoder over the traits' decode_sub, or a fast
// specialisation in cuda/blocks/decode_<format>.hpp).
#pragma once
#include "formats/all.hpp"

namespace strata::cuda::production {

using ProductionFormats = FormatList<Iq3S, Q2_0>;

}  // namespace strata::cuda::production
