// The q10 kernels' unit of weight decode: one *piece* of a wide span -- the whole span when
// S <= 32, one 32-value half when S = 64 -- so a thread decodes at most 32 integers at a time.
// Host and device. The generic WidePiece<F> decodes the span with F::decode_wide and keeps the
// piece; specialisations decode the piece alone and must give the same integers and scale (checked
// against decode_wide on every block of the bundled vectors and on random blocks by
// tests/unit/q10_wide_piece_test.cpp).
//
// Q1_0, TQ1_0, TQ2_0 (S = 64 of two sub-blocks): a piece is one sub-block from decode_sub, not
// the whole span decoded and half of it kept.
// WideSubPair<F>: for the formats whose 16-value spans are the two halves of one decode_sub
// sub-block (decode_wide_by_sub with S = 16: K-quants Q2_K, Q3_K, Q6_K, IQ2_XS, IQ2_S, NVFP4),
// both spans of a sub-block from one decode_sub, rather than a whole sub-block decoded per span
// and half of it kept (checked against decode_wide by the same test).
#pragma once
#include <cstdint>
#include <type_traits>

#include "common/hd.hpp"
#include "formats/format.hpp"
#include "formats/iq2_s.hpp"
#include "formats/iq2_xs.hpp"
#include "formats/iq3_s.hpp"
#include "formats/nvfp4.hpp"
#include "formats/q1_0.hpp"
#include "formats/q2_0.hpp"
#include "formats/q2_k.hpp"
#include "formats/q3_k.hpp"
#include "formats/q6_k.hpp"
#include "formats/tq1_0.hpp"
#include "formats/tq2_0.hpp"

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
    if constexpr (kPiecesPerSpan == 1) {
      F::decode_wide(block, span, w, s);
    } else {
      int16_t full[F::kWideSpan];
      F::decode_wide(block, span, full, s);
      // Two fixed-index copies rather than full[kValues * piece + i]: no indexed local array.
      if (piece == 0) {
        for (int i = 0; i < kValues; ++i) w[i] = full[i];
      } else {
        for (int i = 0; i < kValues; ++i) w[i] = full[kValues + i];
      }
    }
  }
};

// The formats whose decode_wide is decode_wide_by_sub with S = 64 (two sub-blocks under one
// block-wide scale): a piece is one sub-block, decoded alone by decode_sub.
template <class F>
inline constexpr bool kWideSubBlockPieces =
    std::is_same_v<F, Q1_0> || std::is_same_v<F, Tq1_0> || std::is_same_v<F, Tq2_0>;

template <class F>
  requires kWideSubBlockPieces<F>
struct WidePiece<F> {
  static constexpr int kValues = 32;
  static constexpr int kPiecesPerSpan = 2;
  STRATA_HD_INLINE static void decode(const uint8_t* block, int span, int piece,
                                      int16_t* w /*[32]*/, WideScale& s) {
    static_assert(F::kWideSpan == 64 && !F::kSplitScales && !F::kHasOffset);
    int8_t q[kSubBlockValues];
    SubScale factors;
    F::decode_sub(block, 2 * span + piece, q, factors);
    for (int i = 0; i < kSubBlockValues; ++i) w[i] = q[i];
    s.scale = factors.scale[0];
    s.offset = factors.offset[0];
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

// The formats whose decode_wide is decode_wide_by_sub with S = 16 (formats/decode_helpers.hpp).
template <class F>
inline constexpr bool kWideSubPairs =
    std::is_same_v<F, Q2_K> || std::is_same_v<F, Q3_K> || std::is_same_v<F, Q6_K> ||
    std::is_same_v<F, Iq2Xs> || std::is_same_v<F, Iq2S> || std::is_same_v<F, Nvfp4>;

// Spans 2*sub and 2*sub + 1 of the block: w = decode_sub's codes, factors its two halves'.
template <class F>
struct WideSubPair {
  static constexpr int kValues = kSubBlockValues;
  STRATA_HD_INLINE static void decode(const uint8_t* block, int sub, int16_t* w /*[32]*/,
                                      WideScale (&s)[2]) {
    static_assert(!kWideSubPairs<F> || F::kWideSpan == 16, "two 16-value spans per sub-block");
    int8_t q[kSubBlockValues];
    SubScale factors;
    F::decode_sub(block, sub, q, factors);
    for (int i = 0; i < kSubBlockValues; ++i) w[i] = q[i];
    for (int half = 0; half < 2; ++half) s[half] = WideScale{factors.scale[half], factors.offset[half]};
  }
};

}  // namespace strata::cuda::fused_q10
