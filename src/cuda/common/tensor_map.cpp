#include "cuda/common/tensor_map.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstring>

#include "cuda/common/driver_entry.hpp"

namespace strata::cuda {
namespace {

static_assert(sizeof(CUtensorMap) == sizeof(TensorMap) && alignof(CUtensorMap) <= alignof(TensorMap),
              "TensorMap carries a CUtensorMap");

// cuTensorMapEncodeTiled, looked up once; null where the driver does not have it.
PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const auto fn =
      reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(driver_entry_point("cuTensorMapEncodeTiled"));
  return fn;
}

}  // namespace

bool encode_byte_tensor_map(TensorMap& map, const void* base, const uint64_t (&dims)[3], uint64_t row_stride,
                            uint64_t plane_stride, const uint32_t (&box)[3]) {
  const auto encode = encoder();
  if (encode == nullptr || base == nullptr) return false;
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0 || row_stride % 16 != 0 || plane_stride % 16 != 0) return false;
  if (box[0] % 16 != 0) return false;
  for (int i = 0; i < 3; ++i)
    if (dims[i] == 0 || dims[i] > (uint64_t{1} << 32) || box[i] == 0 || box[i] > 256) return false;
  if (row_stride >= (uint64_t{1} << 40) || plane_stride >= (uint64_t{1} << 40)) return false;
  CUtensorMap encoded;
  const cuuint64_t global_dims[3] = {dims[0], dims[1], dims[2]};
  const cuuint64_t global_strides[2] = {row_stride, plane_stride};
  const cuuint32_t box_dims[3] = {box[0], box[1], box[2]};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult status = encode(&encoded, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<void*>(base), global_dims,
                                 global_strides, box_dims, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                 CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS) return false;
  std::memcpy(&map, &encoded, sizeof(encoded));
  return true;
}

}  // namespace strata::cuda
