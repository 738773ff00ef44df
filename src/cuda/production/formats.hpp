// The block formats the CUDA production arm carries. Adding one: a gemm_<format>.cu that
// instantiates launch_grouped_gemm<F>, and the format in this list.
#pragma once
#include "formats/all.hpp"

namespace strata::cuda::production {

using ProductionFormats = FormatList<Iq3S, Q2_0>;

}  // namespace strata::cuda::production
