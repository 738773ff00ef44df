// The block formats the q10 fused kernels carry. Adding one: its traits' decode_wide, the format in
// this list and an instantiation file (gate_up_<format>.cu / down_<format>.cu).
#pragma once
#include "formats/all.hpp"

namespace strata::cuda::fused_q10 {

using Q10GateUpFormats = FormatList<Iq3S>;
using Q10DownFormats = FormatList<Q2_0>;

}  // namespace strata::cuda::fused_q10
