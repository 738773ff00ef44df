// Test-only kernel: the device build of the decoder contract (cuda/blocks/decoder.hpp), one thread
// per sub-block, so tests/gpu/device_decoder_gpu_test.cpp can hold it against the host build.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "formats/ggml_type.hpp"

namespace strata::test {

enum class DecoderProbe {
  kStagedGlobal,   // DeviceDecoder<F>, table staged in shared memory, loads through GlobalLoad
  kResidentPlain,  // DeviceDecoder<F>, its resident table, loads through PlainLoad
  kGeneric,        // GenericDecoder<F> (the traits' decode_sub)
};

// Whether the probe is built for `type` (the formats with a fast decoder, and two generic ones).
bool decoder_probe_carries(GgmlType type);

// blocks: [n_blocks] blocks of `type` on the device (2-byte aligned); words: [n_blocks * subs][8],
// scales: [n_blocks * subs] with subs = values per block / 32, sub-block order. Checks the launch.
void launch_decoder_probe(GgmlType type, DecoderProbe probe, const uint8_t* blocks,
                          int64_t n_blocks, uint32_t* words, float* scales, cudaStream_t stream);

}  // namespace strata::test
