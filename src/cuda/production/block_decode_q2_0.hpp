// The Q2_0 decoder under its production name (see block_decode.hpp).
#pragma once
#include "cuda/blocks/decode_q2_0.hpp"
#include "cuda/production/block_decode.hpp"
