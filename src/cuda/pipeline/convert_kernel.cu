#include <climits>
#include <string>

#include "common/error.hpp"
#include "cuda/common/check.hpp"
#include "cuda/pipeline/convert.hpp"

namespace strata::cuda {
namespace {

struct WidenF16 {
  __device__ float operator()(uint16_t v) const { return f16_to_f32(v); }
};
struct WidenBF16 {
  __device__ float operator()(uint16_t v) const { return bf16_to_f32(v); }
};
struct NarrowF16 {
  __device__ uint16_t operator()(float v) const { return f32_to_f16(v); }
};
struct NarrowBF16 {
  __device__ uint16_t operator()(float v) const { return f32_to_bf16(v); }
};
struct NarrowIds {
  __device__ int32_t operator()(int64_t v) const { return v >= 0 && v <= INT_MAX ? static_cast<int32_t>(v) : -1; }
};

template <class From, class To, class Op>
__global__ void convert_kernel(const From* __restrict__ src,  // [count]
                               To* __restrict__ dst,          // [count]
                               size_t count, Op op) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    dst[i] = op(src[i]);
}

template <class From, class To, class Op>
void launch(const void* src, void* dst, size_t count, Op op, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const size_t blocks = (count + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
  convert_kernel<From, To, Op><<<grid, kThreads, 0, stream>>>(static_cast<const From*>(src), static_cast<To*>(dst),
                                                              count, op);
  STRATA_CUDA_CHECK_LAUNCH("convert_kernel");
}

}  // namespace

void launch_convert(const void* src, DType from, void* dst, DType to, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  if (from == DType::kF16 && to == DType::kF32)
    launch<uint16_t, float>(src, dst, count, WidenF16{}, stream);
  else if (from == DType::kBF16 && to == DType::kF32)
    launch<uint16_t, float>(src, dst, count, WidenBF16{}, stream);
  else if (from == DType::kF32 && to == DType::kF16)
    launch<float, uint16_t>(src, dst, count, NarrowF16{}, stream);
  else if (from == DType::kF32 && to == DType::kBF16)
    launch<float, uint16_t>(src, dst, count, NarrowBF16{}, stream);
  else if (from == DType::kI64 && to == DType::kI32)
    launch<int64_t, int32_t>(src, dst, count, NarrowIds{}, stream);
  else
    fail(Status::kInternal, "convert: no device conversion from dtype " + std::to_string(static_cast<int>(from)) +
                                " to " + std::to_string(static_cast<int>(to)));
}

}  // namespace strata::cuda
