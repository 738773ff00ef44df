#include "half_piece_probe.hpp"

#include <cuda_fp16.h>

#include "cuda/common/check.hpp"
#include "cuda/fused_q10/hopper_q10_decode.hpp"
#include "formats/registry.hpp"

namespace strata::test {
namespace {

template <class F>
__global__ void half_piece_probe_kernel(const uint8_t* blocks, int64_t n_pieces, float* w, float* scale,
                                        float* offset) {
  using Piece = cuda::fused_q10::HalfPiece<F>;
  constexpr int kSpans = cuda::fused_q10::kPieceSpans<F>;
  constexpr int kPiecesPerBlock = F::kBlockValues / 32;
  __shared__ alignas(16) uint32_t table[Piece::kTableWords];
  for (int i = threadIdx.x; i < Piece::kTableWords; i += blockDim.x) table[i] = Piece::table_word(i);
  __syncthreads();
  const int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= n_pieces) return;
  uint32_t h2[16];
  WideScale s[kSpans];
  Piece::decode(blocks + (p / kPiecesPerBlock) * F::kBlockBytes, static_cast<int>(p % kPiecesPerBlock), table, h2,
                s);
  for (int i = 0; i < 16; ++i) {
    const __half2 pair = *reinterpret_cast<const __half2*>(&h2[i]);
    w[32 * p + 2 * i] = __low2float(pair);
    w[32 * p + 2 * i + 1] = __high2float(pair);
  }
  for (int j = 0; j < kSpans; ++j) {
    scale[2 * p + j] = s[j].scale;
    offset[2 * p + j] = s[j].offset;
  }
}

__global__ void f16_select_probe_kernel(float* out) {
  const int h = blockIdx.x * blockDim.x + threadIdx.x;
  if (h < 65536) out[h] = cuda::fused_q10::f16_bits_to_float_select(static_cast<uint32_t>(h));
}

}  // namespace

void launch_f16_select_probe(float* out, cudaStream_t stream) {
  f16_select_probe_kernel<<<256, 256, 0, stream>>>(out);
  STRATA_CUDA_CHECK_LAUNCH("f16_select_probe_kernel");
}

int half_piece_spans(GgmlType type) {
  int spans = 0;
  visit_format(type, [&](auto tag) { spans = cuda::fused_q10::kPieceSpans<typename decltype(tag)::Format>; });
  return spans;
}

bool launch_half_piece_probe(GgmlType type, const uint8_t* blocks, int64_t n_blocks, float* w, float* scale,
                             float* offset, cudaStream_t stream) {
  return visit_format(type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    const int64_t n_pieces = n_blocks * (F::kBlockValues / 32);
    constexpr int kThreads = 128;
    const auto grid = static_cast<unsigned>((n_pieces + kThreads - 1) / kThreads);
    if (grid == 0) return;
    half_piece_probe_kernel<F><<<grid, kThreads, 0, stream>>>(blocks, n_pieces, w, scale, offset);
    STRATA_CUDA_CHECK_LAUNCH("half_piece_probe_kernel");
  });
}

}  // namespace strata::test
