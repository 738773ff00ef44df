// One kernel template per operation, instantiated for every registered format through
// visit_format; one thread decodes one block (decode) or one 32-value sub-block (decode_sub).
#include "cuda/decode/decode.hpp"

#include <string>

#include "cuda/common/check.hpp"
#include "formats/registry.hpp"

namespace strata::cuda {
namespace {

constexpr int kThreadsPerCta = 128;

template <class F>
__global__ void __launch_bounds__(kThreadsPerCta)
    decode_blocks_kernel(const uint8_t* __restrict__ blocks,  // [n_blocks, F::kBlockBytes]
                         int64_t n_blocks,
                         float* __restrict__ out) {  // [n_blocks, F::kBlockValues]
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kThreadsPerCta + threadIdx.x;
  if (b >= n_blocks) return;
  F::decode(blocks + b * F::kBlockBytes, out + b * F::kBlockValues);
}

template <class F>
__global__ void __launch_bounds__(kThreadsPerCta)
    decode_subblocks_kernel(const uint8_t* __restrict__ blocks,  // [n_blocks, F::kBlockBytes]
                            int64_t n_sub,                       // n_blocks * kSubsPerBlock
                            int8_t* __restrict__ codes,          // [n_sub, 32]
                            float* __restrict__ scales,          // [n_sub, 2]
                            float* __restrict__ offsets) {       // [n_sub, 2]
  constexpr int kSubsPerBlock = F::kBlockValues / kSubBlockValues;
  const int64_t k = static_cast<int64_t>(blockIdx.x) * kThreadsPerCta + threadIdx.x;
  if (k >= n_sub) return;
  int8_t q[kSubBlockValues];
  SubScale s;
  F::decode_sub(blocks + (k / kSubsPerBlock) * F::kBlockBytes, static_cast<int>(k % kSubsPerBlock),
                q, s);
  for (int i = 0; i < kSubBlockValues; ++i) codes[k * kSubBlockValues + i] = q[i];
  for (int h = 0; h < 2; ++h) {
    scales[2 * k + h] = s.scale[h];
    offsets[2 * k + h] = s.offset[h];
  }
}

unsigned grid_for(int64_t threads) {
  const int64_t ctas = (threads + kThreadsPerCta - 1) / kThreadsPerCta;
  require(ctas <= 0x7FFFFFFF, Status::kInvalidArgument, "decode: too many blocks for one launch");
  return static_cast<unsigned>(ctas);
}

[[noreturn]] void unknown_type(GgmlType type) {
  fail(Status::kUnsupported, "decode: type id " + std::to_string(static_cast<uint32_t>(type)) +
                                 " is not a block format this library decodes");
}

}  // namespace

void decode_blocks_cuda(GgmlType type, const void* d_blocks, int64_t n_blocks, float* d_out,
                        cudaStream_t stream) {
  require(n_blocks >= 0, Status::kInvalidArgument, "decode_blocks_cuda: negative block count");
  if (n_blocks == 0) return;
  require(d_blocks != nullptr && d_out != nullptr, Status::kInvalidArgument,
          "decode_blocks_cuda: null pointer");
  const bool known = visit_format(type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    decode_blocks_kernel<F><<<grid_for(n_blocks), kThreadsPerCta, 0, stream>>>(
        static_cast<const uint8_t*>(d_blocks), n_blocks, d_out);
    STRATA_CUDA_CHECK_LAUNCH("decode_blocks_kernel");
  });
  if (!known) unknown_type(type);
}

void decode_subblocks_cuda(GgmlType type, const void* d_blocks, int64_t n_blocks, int8_t* d_codes,
                           float* d_scales, float* d_offsets, cudaStream_t stream) {
  require(n_blocks >= 0, Status::kInvalidArgument, "decode_subblocks_cuda: negative block count");
  bool int8 = true;
  const bool known = visit_format(type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    if constexpr (F::kInt8) {
      if (n_blocks == 0) return;
      require(
          d_blocks != nullptr && d_codes != nullptr && d_scales != nullptr && d_offsets != nullptr,
          Status::kInvalidArgument, "decode_subblocks_cuda: null pointer");
      const int64_t n_sub = n_blocks * (F::kBlockValues / kSubBlockValues);
      decode_subblocks_kernel<F><<<grid_for(n_sub), kThreadsPerCta, 0, stream>>>(
          static_cast<const uint8_t*>(d_blocks), n_sub, d_codes, d_scales, d_offsets);
      STRATA_CUDA_CHECK_LAUNCH("decode_subblocks_kernel");
    } else {
      int8 = false;
    }
  });
  if (!known) unknown_type(type);
  require(int8, Status::kUnsupported,
          std::string("decode_subblocks_cuda: ") + std::string(ggml_type_name(type)) +
              " has no int8 decomposition");
}

}  // namespace strata::cuda
