// Every block format header, and the list the registry iterates. Adding a format: write
// formats/<name>.hpp (see format.hpp for the contract), include it here, add it to the list.
#pragma once
#include "formats/format.hpp"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"

namespace strata {

template <class... F>
struct FormatList {};

#define STRATA_BLOCK_FORMATS Iq3S, Q2_0

}  // namespace strata
