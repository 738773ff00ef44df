#include "cuda/common/check.hpp"
#include "cuda/synth/random_blocks.hpp"

namespace strata::cuda {
namespace {

__device__ __forceinline__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One thread per block; bytes written one at a time (blocks are not 4-byte aligned).
__global__ void random_blocks_kernel(uint8_t* __restrict__ data,  // [n_blocks * block_bytes]
                                     size_t n_blocks, int block_bytes, uint64_t seed) {
  const size_t b = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= n_blocks) return;
  uint8_t* block = data + b * block_bytes;
  uint64_t bits = 0;
  for (int i = 0; i < block_bytes; ++i) {
    if (i % 8 == 0) bits = mix64(seed + 0x9E3779B97F4A7C15ull * (b * 64 + static_cast<size_t>(i / 8) + 1));
    block[i] = static_cast<uint8_t>(bits >> (8 * (i % 8)));
  }
  // f16 with exponent 6..7 (2^-9 .. 2^-7) and a random mantissa: finite, positive, normal.
  const uint64_t r = mix64(seed ^ (b + 0x1234567ull));
  const uint16_t h = static_cast<uint16_t>(((6u + (r & 1u)) << 10) | ((r >> 1) & 0x3FFu));
  block[0] = static_cast<uint8_t>(h & 0xFF);
  block[1] = static_cast<uint8_t>(h >> 8);
}

}  // namespace

void launch_random_blocks(uint8_t* data, size_t n_blocks, int block_bytes, uint64_t seed, cudaStream_t stream) {
  if (n_blocks == 0) return;
  constexpr int kThreads = 256;
  const auto grid = static_cast<unsigned>((n_blocks + kThreads - 1) / kThreads);
  random_blocks_kernel<<<grid, kThreads, 0, stream>>>(data, n_blocks, block_bytes, seed);
  STRATA_CUDA_CHECK_LAUNCH("random_blocks_kernel");
}

}  // namespace strata::cuda
