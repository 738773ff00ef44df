// The q10 Hopper kernels' weight decode: one 32-value piece of a wide span as integers, with the
// format's lookup table (if any) in shared memory. Host and device, so the CPU tests compare it
// with the traits' decode_wide on every bundled block and on random blocks.
#pragma once
#include <cstdint>

#include "common/hd.hpp"
#include "cuda/fused_q10/wide_piece.hpp"
#include "formats/format.hpp"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"
#include "formats/tables.hpp"

namespace strata::cuda::fused_q10 {

// Generic: the traits' wide decode, no table.
template <class F>
struct TablePiece {
  static constexpr int kTableWords = 1;
  STRATA_HD_INLINE static uint32_t table_word(int) { return 0; }
  STRATA_HD_INLINE static void decode(const uint8_t* block, int span, int piece, const uint32_t* /*table*/,
                                      int16_t* w /*[32]*/, WideScale& s) {
    WidePiece<F>::decode(block, span, piece, w, s);
  }
};

// IQ3_S: sub-block 2*span + piece; magnitudes from the grid table, w = +-grid * (1 + 2s), scale d.
template <>
struct TablePiece<Iq3S> {
  static constexpr int kTableWords = tables::k_iq3s_grid_size;
  STRATA_HD_INLINE static uint32_t table_word(int i) { return tables::iq3s_grid(i); }
  STRATA_HD_INLINE static void decode(const uint8_t* block, int span, int piece, const uint32_t* grid /*[512]*/,
                                      int16_t* w /*[32]*/, WideScale& s) {
    const int sub = 2 * span + piece;
    const int multiplier = Iq3S::sub_scale(block, sub);
    const uint8_t qh = block[Iq3S::kQhOffset + sub];
    const uint8_t* qs = block + Iq3S::kQsOffset + 8 * sub;
    const uint8_t* signs = block + Iq3S::kSignsOffset + 4 * sub;
#if STRATA_DEVICE_PASS
#pragma unroll
#endif
    for (int m = 0; m < 8; ++m) {
      const uint32_t magnitudes = grid[qs[m] | (((qh >> m) & 1) << 8)];
      const int bits = signs[m / 2] >> (4 * (m % 2));
#if STRATA_DEVICE_PASS
#pragma unroll
#endif
      for (int j = 0; j < 4; ++j) {
        const int magnitude = static_cast<int>((magnitudes >> (8 * j)) & 0xFF) * multiplier;
        w[4 * m + j] = static_cast<int16_t>(((bits >> j) & 1) ? -magnitude : magnitude);
      }
    }
    s.scale = load_fp16le(block);
    s.offset = 0.0f;
  }
};

}  // namespace strata::cuda::fused_q10
