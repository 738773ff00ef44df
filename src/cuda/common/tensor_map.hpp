// TMA tensor maps of byte tensors (sm_90): the descriptor the copy engine reads to move a box of a
// strided tensor into shared memory with one instruction. Encoded on the host through the driver's
// cuTensorMapEncodeTiled, reached via the runtime, so nothing links against libcuda.
#pragma once
#include <cstdint>

namespace strata::cuda {

// The 128-byte, 128-byte-aligned descriptor (CUtensorMap), opaque to the host code that carries it.
struct alignas(128) TensorMap {
  uint64_t words[16];
};

// A 3-d tensor of bytes: dims[0] bytes per row (contiguous), dims[1] rows `row_stride` bytes apart,
// dims[2] planes `plane_stride` bytes apart; boxes of box[0] x box[1] x box[2] bytes land densely in
// shared memory (box[0] bytes per row) and read zeros outside the tensor. Returns false, leaving
// `map` as it was, where the driver lacks tensor maps or refuses the layout (the TMA rules: a
// 16-byte-aligned base, strides that are multiples of 16, box[0] a multiple of 16 up to 256, every
// box dimension 1..256); the caller then moves the bytes another way.
bool encode_byte_tensor_map(TensorMap& map, const void* base, const uint64_t (&dims)[3], uint64_t row_stride,
                            uint64_t plane_stride, const uint32_t (&box)[3]);

}  // namespace strata::cuda
