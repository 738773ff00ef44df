// Every block format header, and the list the registry iterates. Adding a format: write
// formats/<name>.hpp (see format.hpp for the contract), include it here, add it to the list.
#pragma once
#include "formats/format.hpp"
#include "formats/iq1_m.hpp"
#include "formats/iq1_s.hpp"
#include "formats/iq2_s.hpp"
#include "formats/iq2_xs.hpp"
#include "formats/iq2_xxs.hpp"
#include "formats/iq3_s.hpp"
#include "formats/iq3_xxs.hpp"
#include "formats/iq4_nl.hpp"
#include "formats/iq4_xs.hpp"
#include "formats/mxfp4.hpp"
#include "formats/nvfp4.hpp"
#include "formats/q1_0.hpp"
#include "formats/q2_0.hpp"
#include "formats/q2_k.hpp"
#include "formats/q3_k.hpp"
#include "formats/q4_0.hpp"
#include "formats/q4_1.hpp"
#include "formats/q4_k.hpp"
#include "formats/q5_0.hpp"
#include "formats/q5_1.hpp"
#include "formats/q5_k.hpp"
#include "formats/q6_k.hpp"
#include "formats/q8_0.hpp"
#include "formats/tq1_0.hpp"
#include "formats/tq2_0.hpp"

namespace strata {

template <class... F>
struct FormatList {};

// In ggml type-id order (2 .. 42).
#define STRATA_BLOCK_FORMATS                                                                      \
  Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Iq2Xxs, Iq2Xs, Iq3Xxs, Iq1S, Iq4Nl, \
      Iq3S, Iq2S, Iq4Xs, Iq1M, Tq1_0, Tq2_0, Mxfp4, Nvfp4, Q1_0, Q2_0

}  // namespace strata
