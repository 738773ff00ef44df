#include <cuda_fp16.h>

#include <cmath>

#include "cuda/common/async_sm90.cuh"
#include "cuda/common/check.hpp"
#include "cuda/mma/span_mma.cuh"
#include "f16_mma_probe.hpp"

namespace strata::test {
namespace {

using cuda::mma::SpanMma;

// A stand-in format with the widest weights a span of S values may carry: S * 511 * W < 2^24.
template <int S>
struct ProbeSpan {
  static constexpr int kWideSpan = S;
  static constexpr int kBlockValues = 256;
  static constexpr int kWideMax =
      ((1 << 24) - 1) / (S * kQ10MaxCode) < 2048 ? ((1 << 24) - 1) / (S * kQ10MaxCode) : 2048;
};
static_assert(cuda::mma::ExactSpan<ProbeSpan<16>> && cuda::mma::ExactSpan<ProbeSpan<32>> &&
              cuda::mma::ExactSpan<ProbeSpan<64>>);
static_assert(ProbeSpan<64>::kWideMax == 513 && ProbeSpan<32>::kWideMax == 1026 &&
              ProbeSpan<16>::kWideMax == 2048);

constexpr int kMaxK = 256;

__device__ __forceinline__ uint32_t pack_f16x2(int16_t lo, int16_t hi) {
  // int16 -> f16 is exact for |v| <= 2048.
  return static_cast<uint32_t>(__half_as_ushort(__short2half_rn(lo))) |
         (static_cast<uint32_t>(__half_as_ushort(__short2half_rn(hi))) << 16);
}

// ---- mma.sync m16n8k16: one warp, a [16, K], b [8, K], d [K/S, 16, 8] --------------------------
template <class F>
__global__ void __launch_bounds__(32)
    mma_sync_probe_kernel(const int16_t* a, const int16_t* b, int k, float* d) {
  using Span = SpanMma<F>;
  constexpr int S = F::kWideSpan;
  const int lane = threadIdx.x, group = lane / 4, tig = lane % 4;
  for (int span = 0; span < k / S; ++span) {
    float acc[4] = {NAN, NAN, NAN, NAN};  // a restarted span never reads it
#pragma unroll
    for (int step = 0; step < Span::kSteps; ++step) {
      const int k0 = span * S + 16 * step + 2 * tig;
      const uint32_t af[4] = {pack_f16x2(a[group * k + k0], a[group * k + k0 + 1]),
                              pack_f16x2(a[(group + 8) * k + k0], a[(group + 8) * k + k0 + 1]),
                              pack_f16x2(a[group * k + k0 + 8], a[group * k + k0 + 9]),
                              pack_f16x2(a[(group + 8) * k + k0 + 8], a[(group + 8) * k + k0 + 9])};
      const uint32_t bf[2] = {pack_f16x2(b[group * k + k0], b[group * k + k0 + 1]),
                              pack_f16x2(b[group * k + k0 + 8], b[group * k + k0 + 9])};
      Span::step_m16n8k16(acc, af, bf, step);
    }
    float* out = d + span * 16 * 8;
    for (int c = 0; c < 2; ++c) {
      out[group * 8 + 2 * tig + c] = acc[c];
      out[(group + 8) * 8 + 2 * tig + c] = acc[2 + c];
    }
  }
}

// ---- nvcuda::wmma 16x16x16: one warp, a [16, K], b [16, K], d [K/S, 16, 16] --------------------
template <class F>
__global__ void __launch_bounds__(32)
    wmma_probe_kernel(const int16_t* a, const int16_t* b, int k, float* d) {
  using Span = SpanMma<F>;
  constexpr int S = F::kWideSpan;
  __shared__ alignas(32) __half a_tile[16 * S];  // [m][kk], lda = S
  __shared__ alignas(32) __half b_tile[16 * S];  // column n at n * S: [n][kk], ldb = S
  __shared__ alignas(32) float c_tile[16 * 16];
  const int lane = threadIdx.x;
  for (int span = 0; span < k / S; ++span) {
    for (int i = lane; i < 16 * S; i += 32) {
      const int row = i / S, kk = i % S;
      a_tile[i] = __short2half_rn(a[row * k + span * S + kk]);
      b_tile[i] = __short2half_rn(b[row * k + span * S + kk]);
    }
    __syncwarp();
    strata::mma::Tile16F16::Acc acc;
#pragma unroll
    for (int step = 0; step < Span::kSteps; ++step)
      Span::step_tile16(acc, a_tile + 16 * step, S, b_tile + 16 * step, S, step);
    strata::mma::Tile16F16::store(c_tile, acc);
    __syncwarp();
    for (int i = lane; i < 16 * 16; i += 32) d[span * 256 + i] = c_tile[i];
    __syncwarp();
  }
}

// ---- wgmma m64nNk16: one warpgroup, a [64, K], b [N, K], d [K/S, 64, N] ------------------------
// Shared operands per k16 step in K-major core matrices: element (row, kk) of step s at
// tile[s][((row / 8) * 2 + kk / 8) * 64 + (row % 8) * 8 + kk % 8] -- 128 bytes between core
// matrices adjacent in K (leading), 256 between those adjacent in M or N (stride).
constexpr uint32_t kLeadingBytes = 128, kStrideBytes = 256;

__device__ __forceinline__ int core_matrix_index(int row, int kk) {
  return ((row / 8) * 2 + kk / 8) * 64 + (row % 8) * 8 + kk % 8;
}

template <class F, int N, bool kSharedA>
__global__ void __launch_bounds__(128)
    wgmma_probe_kernel(const int16_t* a, const int16_t* b, int k, float* d) {
  using Span = SpanMma<F>;
  constexpr int S = F::kWideSpan, kSteps = Span::kSteps;
  static_assert(kSteps * (N + (kSharedA ? 64 : 0)) * 16 * 2 <= 48 * 1024, "static shared memory");
  __shared__ alignas(128) __half b_tile[kSteps][N * 16];
  __shared__ alignas(128) __half a_tile[kSharedA ? kSteps : 1][64 * 16];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, group = lane / 4, tig = lane % 4;
  const int row = 16 * warp + group;
  for (int span = 0; span < k / S; ++span) {
    __syncthreads();  // the previous span's products have read the tiles
    for (int i = tid; i < N * S; i += 128) {
      const int n = i / S, kk = i % S;
      b_tile[kk / 16][core_matrix_index(n, kk % 16)] = __short2half_rn(b[n * k + span * S + kk]);
    }
    if constexpr (kSharedA) {
      for (int i = tid; i < 64 * S; i += 128) {
        const int m = i / S, kk = i % S;
        a_tile[kk / 16][core_matrix_index(m, kk % 16)] = __short2half_rn(a[m * k + span * S + kk]);
      }
    }
    cuda::fence_proxy_async_shared();
    __syncthreads();
    uint32_t af[kSteps][4];
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
      const int k0 = span * S + 16 * step + 2 * tig;
      af[step][0] = pack_f16x2(a[row * k + k0], a[row * k + k0 + 1]);
      af[step][1] = pack_f16x2(a[(row + 8) * k + k0], a[(row + 8) * k + k0 + 1]);
      af[step][2] = pack_f16x2(a[row * k + k0 + 8], a[row * k + k0 + 9]);
      af[step][3] = pack_f16x2(a[(row + 8) * k + k0 + 8], a[(row + 8) * k + k0 + 9]);
    }
    float acc[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; ++i) acc[i] = NAN;  // scale-d = 0 on step 0 must ignore it
    cuda::mma::fence_accumulators(acc);
    cuda::mma::wgmma_fence();
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
      const uint64_t b_desc = cuda::mma::wgmma_desc(cuda::shared_address(&b_tile[step][0]),
                                                    kLeadingBytes, kStrideBytes);
      if constexpr (kSharedA) {
        const uint64_t a_desc = cuda::mma::wgmma_desc(cuda::shared_address(&a_tile[step][0]),
                                                      kLeadingBytes, kStrideBytes);
        Span::template step_wgmma_ss<N>(acc, a_desc, b_desc, step);
      } else {
        Span::template step_wgmma_rs<N>(acc, af[step], b_desc, step);
      }
    }
    cuda::mma::wgmma_commit();
    cuda::mma::wgmma_wait<0>();
    cuda::mma::fence_accumulators(acc);
    float* out = d + static_cast<int64_t>(span) * 64 * N;
#pragma unroll
    for (int j = 0; j < N / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int c = 0; c < 2; ++c)
          out[(row + 8 * h) * N + 8 * j + 2 * tig + c] = acc[4 * j + 2 * h + c];
  }
}

// Writes 1 when the image the runtime loaded for this device carries the wgmma bodies.
__global__ void wgmma_image_kernel(int* out) {
  *out = STRATA_WGMMA_AVAILABLE;
}

template <int S>
void launch_span(F16Mma op, const int16_t* a, const int16_t* b, int k, float* d,
                 cudaStream_t stream) {
  using F = ProbeSpan<S>;
  switch (op) {
    case F16Mma::kMmaSyncM16N8K16:
      mma_sync_probe_kernel<F><<<1, 32, 0, stream>>>(a, b, k, d);
      break;
    case F16Mma::kWmma16x16x16:
      wmma_probe_kernel<F><<<1, 32, 0, stream>>>(a, b, k, d);
      break;
    case F16Mma::kWgmmaRsN64:
      wgmma_probe_kernel<F, 64, false><<<1, 128, 0, stream>>>(a, b, k, d);
      break;
    case F16Mma::kWgmmaRsN128:
      wgmma_probe_kernel<F, 128, false><<<1, 128, 0, stream>>>(a, b, k, d);
      break;
    case F16Mma::kWgmmaRsN256:
      wgmma_probe_kernel<F, 256, false><<<1, 128, 0, stream>>>(a, b, k, d);
      break;
    case F16Mma::kWgmmaSsN64:
      wgmma_probe_kernel<F, 64, true><<<1, 128, 0, stream>>>(a, b, k, d);
      break;
    case F16Mma::kWgmmaSsN128:
      wgmma_probe_kernel<F, 128, true><<<1, 128, 0, stream>>>(a, b, k, d);
      break;
    case F16Mma::kWgmmaSsN256:
      wgmma_probe_kernel<F, 256, true><<<1, 128, 0, stream>>>(a, b, k, d);
      break;
  }
  STRATA_CUDA_CHECK_LAUNCH("f16 span probe kernel");
}

}  // namespace

F16MmaInfo f16_mma_info(F16Mma op) {
  switch (op) {
    case F16Mma::kMmaSyncM16N8K16:
      return {"mma_sync_m16n8k16", 16, 8, false};
    case F16Mma::kWmma16x16x16:
      return {"wmma_16x16x16", 16, 16, false};
    case F16Mma::kWgmmaRsN64:
      return {"wgmma_m64n64k16_rs", 64, 64, true};
    case F16Mma::kWgmmaRsN128:
      return {"wgmma_m64n128k16_rs", 64, 128, true};
    case F16Mma::kWgmmaRsN256:
      return {"wgmma_m64n256k16_rs", 64, 256, true};
    case F16Mma::kWgmmaSsN64:
      return {"wgmma_m64n64k16_ss", 64, 64, true};
    case F16Mma::kWgmmaSsN128:
      return {"wgmma_m64n128k16_ss", 64, 128, true};
    case F16Mma::kWgmmaSsN256:
      return {"wgmma_m64n256k16_ss", 64, 256, true};
  }
  return {"?", 0, 0, false};
}

bool f16_mma_available(F16Mma op) {
  if (!f16_mma_info(op).wgmma) return true;
  int device = 0, major = 0, minor = 0;
  STRATA_CUDA_CHECK(cudaGetDevice(&device));
  STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) return false;
  int* flag = nullptr;
  STRATA_CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  STRATA_CUDA_CHECK(cudaMemset(flag, 0, sizeof(int)));
  wgmma_image_kernel<<<1, 1>>>(flag);
  STRATA_CUDA_CHECK_LAUNCH("wgmma_image_kernel");
  int host = 0;
  STRATA_CUDA_CHECK(cudaMemcpy(&host, flag, sizeof(int), cudaMemcpyDeviceToHost));
  STRATA_CUDA_CHECK(cudaFree(flag));
  return host == 1;
}

int f16_probe_max_weight(int span) {
  switch (span) {
    case 16:
      return ProbeSpan<16>::kWideMax;
    case 32:
      return ProbeSpan<32>::kWideMax;
    case 64:
      return ProbeSpan<64>::kWideMax;
  }
  fail(Status::kInvalidArgument, "f16 span probe: span must be 16, 32 or 64");
}

void launch_f16_span_probe(F16Mma op, int span, const int16_t* a, const int16_t* b, int k, float* d,
                           cudaStream_t stream) {
  if (k <= 0 || k > kMaxK || k % span != 0) fail(Status::kInvalidArgument, "f16 span probe: bad K");
  switch (span) {
    case 16:
      launch_span<16>(op, a, b, k, d, stream);
      return;
    case 32:
      launch_span<32>(op, a, b, k, d, stream);
      return;
    case 64:
      launch_span<64>(op, a, b, k, d, stream);
      return;
  }
  fail(Status::kInvalidArgument, "f16 span probe: span must be 16, 32 or 64");
}

}  // namespace strata::test
