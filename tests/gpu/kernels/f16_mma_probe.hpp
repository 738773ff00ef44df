// Test-only kernels: each fp16 MMA primitive of the q10 kernels (mma.sync m16n8k16, nvcuda::wmma
// 16x16x16, wgmma m64nNk16 with A from registers or shared memory) multiplying integer operands
// span by span through SpanMma (cuda/mma/span_mma.cuh), one CTA, no fold: the raw fp32 span dots.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace strata::test {

enum class F16Mma {
  kMmaSyncM16N8K16,
  kWmma16x16x16,
  kWgmmaRsN64,
  kWgmmaRsN128,
  kWgmmaRsN256,
  kWgmmaSsN64,
  kWgmmaSsN128,
  kWgmmaSsN256,
};

struct F16MmaInfo {
  const char* name;
  int m, n;    // output tile of the one CTA
  bool wgmma;  // needs an sm_90 device and an sm_90a image
};

F16MmaInfo f16_mma_info(F16Mma op);
// Whether this device and build can run `op` (wgmma: an sm_90 device and a 90a image).
bool f16_mma_available(F16Mma op);

// Largest |w| a probe of span S may carry: the 2^24 envelope (S * 511 * W < 2^24, W <= 2048).
int f16_probe_max_weight(int span);

// a: [M, K] int16 weights (|a| <= f16_probe_max_weight(span)), b: [N, K] int16 activation codes
// (|b| <= 511), both row-major with k contiguous (row n of b = column n of the product), device;
// d: [K / span, M, N] f32 row-major, device: d[s][m][n] = sum over k in span s of a[m][k] *
// b[n][k]. K a multiple of span, span in {16, 32, 64}, K <= 256.
void launch_f16_span_probe(F16Mma op, int span, const int16_t* a, const int16_t* b, int k, float* d,
                           cudaStream_t stream);

}  // namespace strata::test
