// Every fast decoder specialisation: what a kernel includes to read weights through
// DeviceDecoder<F> (a format without one here takes the generic decoder over its decode_sub).
#pragma once
#include "cuda/blocks/decode_iq3_s.hpp"
#include "cuda/blocks/decode_q2_0.hpp"
#include "cuda/blocks/decoder.hpp"
