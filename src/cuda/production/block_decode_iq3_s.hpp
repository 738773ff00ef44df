// The IQ3_S decoder under its production name (see block_decode.hpp).
#pragma once
#include "cuda/blocks/decode_iq3_s.hpp"
#include "cuda/production/block_decode.hpp"
