// The production arm's names for the one device decoder contract (cuda/blocks/decoder.hpp), kept
// for the q10 Hopper decode (fused_q10/hopper_q10_decode.hpp), which reads its int8 sub-blocks
// through it. New code names blocks::DeviceDecoder directly.
#pragma once
#include "cuda/blocks/decoder.hpp"

namespace strata::cuda::production {

template <class F>
using BlockDecoder = blocks::DeviceDecoder<F>;
using blocks::GlobalLoad;
using blocks::PlainLoad;

}  // namespace strata::cuda::production
