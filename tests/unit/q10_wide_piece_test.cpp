// The q10 kernels' piece decode (cuda/fused_q10/wide_piece.hpp, host build of device code) against
// the traits' decode_wide: the same integers, scale and offset bits for every piece of every span,
// on the bundled ggml vectors and on random bytes, for every format the q10 kernels carry
// (q10_formats.hpp). (The Hopper kernels' device pieces are checked on the GPU by
// tests/gpu/hopper_q10_decode_test.cpp.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/fused_q10/hopper_q10_decode.hpp"
#include "cuda/fused_q10/q10_formats.hpp"
#include "cuda/fused_q10/wide_piece.hpp"
#include "decode_vectors.hpp"
#include "formats/all.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

template <class F>
int64_t piece_mismatches(const std::vector<uint8_t>& blocks) {
  using Piece = cuda::fused_q10::WidePiece<F>;
  static_assert(Piece::kValues * Piece::kPiecesPerSpan == F::kWideSpan && Piece::kValues <= 32);
  int64_t wrong = 0;
  const int64_t n_blocks = static_cast<int64_t>(blocks.size()) / F::kBlockBytes;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* block = blocks.data() + b * F::kBlockBytes;
    for (int span = 0; span < F::kBlockValues / F::kWideSpan; ++span) {
      int16_t full[F::kWideSpan];
      WideScale want{};
      F::decode_wide(block, span, full, want);
      for (int piece = 0; piece < Piece::kPiecesPerSpan; ++piece) {
        int16_t w[Piece::kValues];
        WideScale got{};
        Piece::decode(block, span, piece, w, got);
        // NOTE: bits, not values: random scale fields may be NaN, and a piece must give that NaN.
        wrong += std::memcmp(&got.scale, &want.scale, sizeof(float)) != 0;
        wrong += std::memcmp(&got.offset, &want.offset, sizeof(float)) != 0;
        for (int i = 0; i < Piece::kValues; ++i) wrong += w[i] != full[Piece::kValues * piece + i];
      }
    }
  }
  return wrong;
}

// The sm_80 kernels' sub-block unit of S = 16 formats: spans 2*sub and 2*sub + 1 in one decode.
template <class F>
int64_t sub_pair_mismatches(const std::vector<uint8_t>& blocks) {
  static_assert(F::kWideSpan == 16);
  int64_t wrong = 0;
  const int64_t n_blocks = static_cast<int64_t>(blocks.size()) / F::kBlockBytes;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* block = blocks.data() + b * F::kBlockBytes;
    for (int sub = 0; sub < F::kBlockValues / 32; ++sub) {
      int16_t w[32];
      WideScale got[2]{};
      cuda::fused_q10::WideSubPair<F>::decode(block, sub, w, got);
      for (int half = 0; half < 2; ++half) {
        int16_t want_w[16];
        WideScale want{};
        F::decode_wide(block, 2 * sub + half, want_w, want);
        wrong += std::memcmp(&got[half].scale, &want.scale, sizeof(float)) != 0;
        wrong += std::memcmp(&got[half].offset, &want.offset, sizeof(float)) != 0;
        for (int i = 0; i < 16; ++i) wrong += w[16 * half + i] != want_w[i];
      }
    }
  }
  return wrong;
}

// kWideBlockScale<F>: every span of a block has span 0's scale, bit for bit (the Hopper consumers
// then form one scale product per chunk).
template <class F>
int64_t block_scale_mismatches(const std::vector<uint8_t>& blocks) {
  int64_t wrong = 0;
  const int64_t n_blocks = static_cast<int64_t>(blocks.size()) / F::kBlockBytes;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* block = blocks.data() + b * F::kBlockBytes;
    int16_t w[F::kWideSpan];
    WideScale first{};
    F::decode_wide(block, 0, w, first);
    for (int span = 1; span < F::kBlockValues / F::kWideSpan; ++span) {
      WideScale s{};
      F::decode_wide(block, span, w, s);
      wrong += std::memcmp(&s.scale, &first.scale, sizeof(float)) != 0;
    }
  }
  return wrong;
}

template <class F>
void check_format() {
  SCOPED_TRACE(F::kName);
  const test::DecodeVectors v = test::load_decode_vectors(F::kName);
  ASSERT_EQ(v.block_bytes, F::kBlockBytes);
  ASSERT_GT(v.n_blocks, 0);
  EXPECT_EQ(piece_mismatches<F>(v.blocks), 0) << "bundled vectors, " << v.n_blocks << " blocks";
  const uint64_t seed = test::fresh_seed(std::string("wide_piece/") + F::kName);
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  std::vector<uint8_t> random(4096 * static_cast<size_t>(F::kBlockBytes));
  for (auto& byte : random) byte = static_cast<uint8_t>(rng.next());
  EXPECT_EQ(piece_mismatches<F>(random), 0) << "random bytes, 4096 blocks";
  if constexpr (cuda::fused_q10::kWideBlockScale<F>) {
    EXPECT_EQ(block_scale_mismatches<F>(v.blocks), 0) << "one scale per block, bundled vectors";
    EXPECT_EQ(block_scale_mismatches<F>(random), 0) << "one scale per block, random bytes";
  }
  if constexpr (cuda::fused_q10::kWideSubPairs<F>) {
    EXPECT_EQ(sub_pair_mismatches<F>(v.blocks), 0) << "sub-block pairs, bundled vectors";
    EXPECT_EQ(sub_pair_mismatches<F>(random), 0) << "sub-block pairs, random bytes";
  }
}

template <class... F>
void check_formats(FormatList<F...>) {
  (check_format<F>(), ...);
}

static_assert(std::is_same_v<cuda::fused_q10::Q10GateUpFormats, cuda::fused_q10::Q10DownFormats>,
              "one list for both roles: checking one checks both");


// Specialised pieces (IQ3_S, Q2_0) and the generic one (decode_wide itself, halved for S = 64) on
// spans of 16, 32 and 64, with and without offsets.
TEST(Q10WidePiece, PiecesAreTheWideDecodeForEveryCarriedFormat) {
  check_formats(cuda::fused_q10::Q10GateUpFormats{});
}

}  // namespace
}  // namespace strata
