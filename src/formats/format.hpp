// The contract every block-format traits type meets (one header per format in this folder).
//
//   struct Iq3S {
//     static constexpr GgmlType kType;           // ggml type id
//     static constexpr const char* kName;        // "iq3_s"
//     static constexpr int kBlockValues;          // values per block (32 .. 256)
//     static constexpr int kBlockBytes;           // bytes per block
//     static constexpr bool kInt8;                // decode_sub exists: the int8 path can carry it
//     static constexpr bool kSplitScales;         // scales differ between the two 16-value halves
//     static constexpr bool kHasOffset;           // y = scale*q + offset (offset via activation sums)
//     STRATA_HD static void decode(const uint8_t* block, float* out);        // bit-exact to_float
//     STRATA_HD static void decode_sub(const uint8_t* block, int sub,         // sub < kBlockValues/32
//                                      int8_t* q /*[32]*/, SubScale& s);
//   };
//
// decode_sub gives the 32 values of one sub-block as int8 codes and per-half fp32 factors:
//   value i (0..31) = s.scale[i / 16] * q[i] + s.offset[i / 16]
// For formats without offset (kHasOffset == false) the product s.scale * q reproduces ggml's
// to_float bit for bit (both factors are exact in fp32). Where kSplitScales is false,
// scale[0] == scale[1] and kernels may fold a single int32 dot over all 32 values.
#pragma once
#include <concepts>
#include <cstdint>

#include "common/bytes.hpp"
#include "common/hd.hpp"
#include "formats/ggml_type.hpp"

namespace strata {

// Values covered by one int8 sub-block: the k-slice of every int8 product in the library.
inline constexpr int kSubBlockValues = 32;

struct SubScale {
  float scale[2];   // per 16-value half
  float offset[2];  // per 16-value half; 0 when the format has no offset term
};

template <class F>
concept BlockFormat = requires(const uint8_t* block, float* out) {
  { F::kType } -> std::convertible_to<GgmlType>;
  { F::kBlockValues } -> std::convertible_to<int>;
  { F::kBlockBytes } -> std::convertible_to<int>;
  { F::kInt8 } -> std::convertible_to<bool>;
  F::decode(block, out);
};

template <class F>
concept Int8BlockFormat = BlockFormat<F> && F::kInt8 && requires(const uint8_t* b, int8_t* q, SubScale& s) {
  F::decode_sub(b, 0, q, s);
};

}  // namespace strata
