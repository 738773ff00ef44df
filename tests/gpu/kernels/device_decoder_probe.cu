#include "device_decoder_probe.hpp"

#include "common/error.hpp"
#include "cuda/blocks/decoders.hpp"
#include "cuda/common/check.hpp"
#include "formats/registry.hpp"

namespace strata::test {
namespace {

using ProbeFormats = FormatList<Iq3S, Q2_0, Q8_0, Q4_0>;

constexpr int kThreads = 128;

template <class F, DecoderProbe Probe>
__global__ void decoder_probe_kernel(
    const uint8_t* blocks,  // [n_blocks] blocks of F, 2-byte aligned
    int64_t n_subs,         // n_blocks * subs per block
    uint32_t* words,        // [n_subs][8]
    float* scales) {        // [n_subs]
  using Decoder = cuda::blocks::DeviceDecoder<F>;
  constexpr int kSubs = F::kBlockValues / kSubBlockValues;
  __shared__ uint32_t table[Decoder::kTableWords];
  for (int i = threadIdx.x; i < Decoder::kTableWords; i += blockDim.x)
    table[i] = Decoder::table_word(i);
  __syncthreads();
  const int64_t task = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (task >= n_subs) return;
  const uint8_t* block = blocks + (task / kSubs) * F::kBlockBytes;
  const int sub = static_cast<int>(task % kSubs);
  uint32_t w[8];
  float scale = 0.0f;
  if constexpr (Probe == DecoderProbe::kStagedGlobal) {
    Decoder::decode(Decoder::load_raw(block, sub, cuda::blocks::GlobalLoad{}), table, w, scale);
  } else if constexpr (Probe == DecoderProbe::kResidentPlain) {
    scale = cuda::blocks::decode_sub_block<F, Decoder, cuda::blocks::PlainLoad>(
        block, sub, Decoder::resident_table(), w);
  } else {
    scale =
        cuda::blocks::decode_sub_block<F, cuda::blocks::GenericDecoder<F>>(block, sub, nullptr, w);
  }
  for (int i = 0; i < 8; ++i) words[task * 8 + i] = w[i];
  scales[task] = scale;
}

template <class F, DecoderProbe Probe>
void launch(const uint8_t* blocks, int64_t n_subs, uint32_t* words, float* scales,
            cudaStream_t stream) {
  const auto grid = static_cast<unsigned>((n_subs + kThreads - 1) / kThreads);
  decoder_probe_kernel<F, Probe><<<grid, kThreads, 0, stream>>>(blocks, n_subs, words, scales);
  STRATA_CUDA_CHECK_LAUNCH("decoder_probe_kernel");
}

}  // namespace

bool decoder_probe_carries(GgmlType type) {
  return visit_format<ProbeFormats>(type, [](auto) {});
}

void launch_decoder_probe(GgmlType type, DecoderProbe probe, const uint8_t* blocks,
                          int64_t n_blocks, uint32_t* words, float* scales, cudaStream_t stream) {
  const bool found = visit_format<ProbeFormats>(type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    const int64_t n_subs = n_blocks * (F::kBlockValues / kSubBlockValues);
    if (n_subs == 0) return;
    switch (probe) {
      case DecoderProbe::kStagedGlobal:
        launch<F, DecoderProbe::kStagedGlobal>(blocks, n_subs, words, scales, stream);
        break;
      case DecoderProbe::kResidentPlain:
        launch<F, DecoderProbe::kResidentPlain>(blocks, n_subs, words, scales, stream);
        break;
      case DecoderProbe::kGeneric:
        launch<F, DecoderProbe::kGeneric>(blocks, n_subs, words, scales, stream);
        break;
    }
  });
  require(found, Status::kInvalidArgument,
          "decoder probe: type " + std::string(ggml_type_name(type)) + " not built");
}

}  // namespace strata::test
