// Test-only kernel: the q10 Hopper kernels' weight decode (HalfPiece<F>, hopper_q10_decode.hpp) of
// every 32-value piece of a run of blocks, with the format's table staged in shared memory as the
// kernels stage it.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "formats/ggml_type.hpp"

namespace strata::test {

// Spans a 32-value piece starts (2 for S = 16, else 1).
int half_piece_spans(GgmlType type);

// blocks: n_blocks blocks of `type`, device, 2-byte aligned. Per piece p (block * pieces + piece):
// w[32 p + i] the f16 integers as float; scale/offset[2 p + j] of the j-th span the piece starts
// (j < half_piece_spans; for S = 64 both halves of a span report its scale). Returns false when
// `type` is no block format.
bool launch_half_piece_probe(GgmlType type, const uint8_t* blocks, int64_t n_blocks, float* w, float* scale,
                             float* offset, cudaStream_t stream);

// out[h] = the pieces' f16 scale conversion (f16_bits_to_float_select) of the bits h, for all
// 65536 of them; out holds 65536 floats on the device.
void launch_f16_select_probe(float* out, cudaStream_t stream);

}  // namespace strata::test
