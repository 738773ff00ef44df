// Shared pieces of the format headers: the block decode written once over decode_sub, and the
// small bit-field readers several layouts use.
#pragma once
#include <cstdint>

#include "formats/format.hpp"

namespace strata {

// Full-block decode through decode_sub. Every value is scale*q (+ offset): the product is exact
// in fp32 for every format here, so this rounds exactly where ggml's to_float rounds.
// NOTE: formats without an offset must not add a 0.0f offset: -0.0 + 0.0 would give +0.0.
template <class F>
STRATA_HD_INLINE void decode_by_sub(const uint8_t* block, float* out /*[F::kBlockValues]*/) {
  int8_t q[kSubBlockValues];
  SubScale s;
  for (int sub = 0; sub < F::kBlockValues / kSubBlockValues; ++sub) {
    F::decode_sub(block, sub, q, s);
    float* y = out + kSubBlockValues * sub;
    for (int i = 0; i < kSubBlockValues; ++i) {
      const float product = s.scale[i / 16] * static_cast<float>(q[i]);
      if constexpr (F::kHasOffset) {
        y[i] = product + s.offset[i / 16];
      } else {
        y[i] = product;
      }
    }
  }
}

// Wide decode (q10) of a format whose span needs no folding: one 16-value half of a sub-block
// (S = 16), one sub-block (S = 32) or two sub-blocks under one block scale (S = 64). w is the
// int8 code, scale and offset are decode_sub's, so scale * w (+ offset) is decode_sub's value.
template <class F>
STRATA_HD_INLINE void decode_wide_by_sub(const uint8_t* block, int span, int16_t* w /*[S]*/,
                                         WideScale& s) {
  constexpr int kSpan = F::kWideSpan;
  int8_t q[kSubBlockValues];
  SubScale sub_scale;
  if constexpr (kSpan == 16) {
    F::decode_sub(block, span / 2, q, sub_scale);
    const int half = span % 2;
    for (int i = 0; i < 16; ++i) w[i] = q[16 * half + i];
    s.scale = sub_scale.scale[half];
    s.offset = sub_scale.offset[half];
  } else {
    static_assert(!F::kSplitScales, "a 32- or 64-value span needs one scale per sub-block");
    static_assert(kSpan == 32 || !F::kHasOffset, "a 64-value span has one block-wide scale");
    for (int part = 0; part < kSpan / kSubBlockValues; ++part) {
      F::decode_sub(block, span * (kSpan / kSubBlockValues) + part, q, sub_scale);
      for (int i = 0; i < kSubBlockValues; ++i) w[kSubBlockValues * part + i] = q[i];
    }
    s.scale = sub_scale.scale[0];
    s.offset = sub_scale.offset[0];
  }
}

// Wide decode of a 64-value span of two sub-blocks whose integer multipliers fold into w:
// w[i] = q[i] * F::wide_multiplier(block, sub, i) with decode_sub's codes q. The caller sets the
// span's scale: decode_sub's factor without the multiplier. Exact where the multiplier is
// positive and no code is zero (so a product keeps ggml's sign), which each format states.
template <class F>
STRATA_HD_INLINE void fold_wide_multipliers(const uint8_t* block, int span, int16_t* w /*[64]*/) {
  static_assert(F::kWideSpan == 2 * kSubBlockValues, "a folded span is two sub-blocks");
  int8_t q[kSubBlockValues];
  SubScale unused;
  for (int part = 0; part < 2; ++part) {
    const int sub = 2 * span + part;
    F::decode_sub(block, sub, q, unused);
    for (int i = 0; i < kSubBlockValues; ++i)
      w[kSubBlockValues * part + i] = static_cast<int16_t>(q[i] * F::wide_multiplier(block, sub, i));
  }
}

// Full-block decode through decode_wide: scale * w (+ offset), the same roundings as ggml.
template <class F>
STRATA_HD_INLINE void decode_by_wide(const uint8_t* block, float* out /*[F::kBlockValues]*/) {
  int16_t w[F::kWideSpan];
  WideScale s;
  for (int span = 0; span < F::kBlockValues / F::kWideSpan; ++span) {
    F::decode_wide(block, span, w, s);
    for (int i = 0; i < F::kWideSpan; ++i) {
      const float product = s.scale * static_cast<float>(w[i]);
      if constexpr (F::kHasOffset) {
        out[F::kWideSpan * span + i] = product + s.offset;
      } else {
        out[F::kWideSpan * span + i] = product;
      }
    }
  }
}

// Both halves of a sub-block share one scale and no offset.
STRATA_HD_INLINE void set_uniform_scale(SubScale& s, float scale) {
  s.scale[0] = s.scale[1] = scale;
  s.offset[0] = s.offset[1] = 0.0f;
}

// The 6-bit scale and min j (0..7) of the 12-byte Q4_K/Q5_K field (FORMATS.md, Q4_K).
STRATA_HD_INLINE void k4_scale_min(const uint8_t* packed /*[12]*/, int j, int& scale, int& min) {
  if (j < 4) {
    scale = packed[j] & 63;
    min = packed[j + 4] & 63;
  } else {
    scale = (packed[j + 4] & 0x0F) | ((packed[j - 4] >> 6) << 4);
    min = (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
  }
}

}  // namespace strata
