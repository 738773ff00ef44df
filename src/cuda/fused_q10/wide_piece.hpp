// The q10 kernels' unit of weight decode: one *piece* of a wide span -- the whole span when
// S <= 32, one 32-value half when S = 64 -- so a thread decodes at most 32 integers at a time.
// Host and device. The generic WidePiece<F> decodes the span with F::decode_wide and keeps the
// piece; specialisations decode the piece alone and must give the same integers and scale (checked
// against decode_wide on every block of the bundled vectors and on random blocks by
// tests/unit/q10_wide_piece_test.cpp).
#pragma once
#include <cstdint>

#include "common/hd.hpp"
#include "formats/format.hpp"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"

namespace strata::cuda::fused_q10 {

template <class F>
inline constexpr int kWidePieceValues = F::kWideSpan == 64 ? 32 : F::kWideSpan;

template <class F>
struct WidePiece {
  static constexpr int kValues = kWidePieceValues<F>;
  static constexpr int kPiecesPerSpan = F::kWideSpan / kValues;
  // Values kValues*piece .. +kValues-1 of span `span` of the block: w and the span's scale.
  STRATA_HD_INLINE static void decode(const uint8_t* block, int span, int piece,
                                      int16_t* w /*[kValues]*/, WideScale& s) {
    int16_t full[F::kWideSpan];
    F::decode_wide(block, span, full, s);
    for (int i = 0; i < kValues; ++i) w[i] = full[kValues * piece + i];
  }
};

// IQ3_S: piece = sub-block 2*span + piece; w = grid * sign * (1 + 2s), scale d (Iq3S::decode_wide).
template <>
struct WidePiece<Iq3S> {
  static constexpr int kValues = 32;
  static constexpr int kPiecesPerSpan = 2;
  STRATA_HD_INLINE static void decode(const uint8_t* block, int span, int piece,
                                      int16_t* w /*[32]*/, WideScale& s) {
    const int sub = 2 * span + piece;
    const int multiplier = Iq3S::sub_scale(block, sub);
    for (int m = 0; m < 8; ++m) {
      const uint32_t magnitudes = Iq3S::group_magnitudes(block, sub, m);
      const uint8_t signs = block[Iq3S::kSignsOffset + 4 * sub + m / 2];
      for (int j = 0; j < 4; ++j) {
        const int magnitude = static_cast<int>((magnitudes >> (8 * j)) & 0xFF);
        const bool negative = (signs >> (4 * (m % 2) + j)) & 1;
        w[4 * m + j] = static_cast<int16_t>((negative ? -magnitude : magnitude) * multiplier);
      }
    }
    s.scale = load_fp16le(block);
    s.offset = 0.0f;
  }
};

// Q2_0: piece = sub-block 2*span + piece; w = code - 1, scale d (decode_wide_by_sub<Q2_0>).
template <>
struct WidePiece<Q2_0> {
  static constexpr int kValues = 32;
  static constexpr int kPiecesPerSpan = 2;
  STRATA_HD_INLINE static void decode(const uint8_t* block, int span, int piece,
                                      int16_t* w /*[32]*/, WideScale& s) {
    const uint8_t* codes = block + 2 + 8 * (2 * span + piece);
    for (int i = 0; i < 32; ++i)
      w[i] = static_cast<int16_t>(((codes[i / 4] >> (2 * (i % 4))) & 3) - 1);
    s.scale = load_fp16le(block);
    s.offset = 0.0f;
  }
};

}  // namespace strata::cuda::fused_q10
