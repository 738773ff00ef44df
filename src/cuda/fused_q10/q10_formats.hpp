// The block formats the q10 fused kernels carry, and which kernel family carries which.
//
// STRATA_Q10_FORMATS is the one list: the sm_80 kernels (q10_product_kernel.cuh) and the sm_90a
// kernels (hopper_q10_kernel.cuh) carry every format in it as gate/up and as down, in any
// combination. CMake reads the list from this file and generates one instantiation file per
// (kernel family, stage, format) from cmake/q10_instance.cu.in and cmake/q10_hopper_instance.cu.in,
// so adding a format is its traits' decode_wide and one entry here.
// NOTE: CMake parses the list: keep it one macro of traits names, separated by commas.
#pragma once
#include <type_traits>

#include "formats/all.hpp"

namespace strata::cuda::fused_q10 {

// clang-format off
#define STRATA_Q10_FORMATS                                                                       \
  Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Iq2Xxs, Iq2Xs, Iq3Xxs, Iq1S, Iq4Nl, \
      Iq3S, Iq2S, Iq4Xs, Iq1M, Tq1_0, Tq2_0, Mxfp4, Nvfp4, Q1_0, Q2_0
// clang-format on

using Q10GateUpFormats = FormatList<STRATA_Q10_FORMATS>;
using Q10DownFormats = FormatList<STRATA_Q10_FORMATS>;

// The sm_90a kernels (hopper_q10_kernel.cuh) carry every format of the list too: their stage plan
// is chosen per format, and q10_hopper_supports states the geometry.

// The 16x16x16 tile kernels (wmma_q10_kernel.cuh, STRATA_PF_FUSED_WMMA=1) carry the same two.
template <class F>
inline constexpr bool kWmmaQ10GateUpCarries = std::is_same_v<F, Iq3S>;
template <class F>
inline constexpr bool kWmmaQ10DownCarries = std::is_same_v<F, Q2_0>;

}  // namespace strata::cuda::fused_q10
