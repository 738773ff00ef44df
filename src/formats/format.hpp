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
//
// The q10 profile (docs/numerics.md) reads the same blocks through a *wide* decode:
//
//     static constexpr bool kWide;                // decode_wide exists: the q10 path carries it
//     static constexpr int kWideSpan;             // S: values per span, 16, 32 or 64
//     static constexpr int kWideMax;              // W_f: bound on |w| the layout can produce
//     STRATA_HD static void decode_wide(const uint8_t* block, int span,   // span < kBlockValues/S
//                                       int16_t* w /*[S]*/, WideScale& s);
//
// value i (0..S-1) of the span = s.scale * w[i] (+ s.offset for kHasOffset formats), bit for
// bit ggml's to_float; integer sub-scales are folded into w wherever the exactness bound
// S * 511 * W_f < 2^24 allows it (checked at compile time by WideBlockFormat).
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

// The q10 activation code bound (|q| <= 511) the wide decode's exactness bound is written for.
inline constexpr int kQ10MaxCode = 511;

// One span's factors in the wide decode.
struct WideScale {
  float scale;
  float offset;  // 0 when the format has no offset term
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

// Every partial sum of a span's integer dot -- S products of |a| <= 511 and |w| <= W_f -- stays
// below 2^24, so fp32 (and an fp16 tensor core's fp32 accumulator) holds it exactly; |w| <= 2048
// keeps w exact in fp16.
template <class F>
constexpr bool wide_span_fits() {
  return (F::kWideSpan == 16 || F::kWideSpan == 32 || F::kWideSpan == 64) &&
         F::kBlockValues % F::kWideSpan == 0 && F::kWideMax >= 1 && F::kWideMax <= 2048 &&
         int64_t{F::kWideSpan} * kQ10MaxCode * F::kWideMax < (int64_t{1} << 24);
}

template <class F>
concept WideBlockFormat =
    BlockFormat<F> && F::kWide && requires(const uint8_t* b, int16_t* w, WideScale& s) {
      F::decode_wide(b, 0, w, s);
    } && wide_span_fits<F>();

}  // namespace strata
