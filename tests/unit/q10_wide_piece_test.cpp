// The q10 kernels' piece decode (cuda/fused_q10/wide_piece.hpp, host build of device code) against
// the traits' decode_wide: the same integers and scale bits for every piece of every span, on the
// bundled ggml vectors and on random bytes (every bit pattern is a valid block of these formats).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/fused_q10/hopper_q10_decode.hpp"
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
        wrong += std::memcmp(&got.scale, &want.scale, sizeof(float)) != 0;
        wrong += std::memcmp(&got.offset, &want.offset, sizeof(float)) != 0;
        for (int i = 0; i < Piece::kValues; ++i) wrong += w[i] != full[Piece::kValues * piece + i];
      }
    }
  }
  return wrong;
}

// The Hopper kernels' piece decode (its table as the kernels load it into shared memory).
template <class F>
int64_t table_piece_mismatches(const std::vector<uint8_t>& blocks) {
  using Piece = cuda::fused_q10::TablePiece<F>;
  std::vector<uint32_t> table(Piece::kTableWords);
  for (int i = 0; i < Piece::kTableWords; ++i) table[i] = Piece::table_word(i);
  int64_t wrong = 0;
  const int64_t n_blocks = static_cast<int64_t>(blocks.size()) / F::kBlockBytes;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* block = blocks.data() + b * F::kBlockBytes;
    for (int span = 0; span < F::kBlockValues / F::kWideSpan; ++span) {
      int16_t full[F::kWideSpan];
      WideScale want{};
      F::decode_wide(block, span, full, want);
      for (int piece = 0; piece < F::kWideSpan / 32; ++piece) {
        int16_t w[32];
        WideScale got{};
        Piece::decode(block, span, piece, table.data(), w, got);
        wrong += std::memcmp(&got.scale, &want.scale, sizeof(float)) != 0;
        wrong += std::memcmp(&got.offset, &want.offset, sizeof(float)) != 0;
        for (int i = 0; i < 32; ++i) wrong += w[i] != full[32 * piece + i];
      }
    }
  }
  return wrong;
}

template <class F>
void check_format(const std::string& vectors_name) {
  SCOPED_TRACE(F::kName);
  const test::DecodeVectors v = test::load_decode_vectors(vectors_name);
  ASSERT_EQ(v.block_bytes, F::kBlockBytes);
  ASSERT_GT(v.n_blocks, 0);
  EXPECT_EQ(piece_mismatches<F>(v.blocks), 0) << "bundled vectors, " << v.n_blocks << " blocks";
  const uint64_t seed = test::fresh_seed(std::string("wide_piece/") + F::kName);
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  std::vector<uint8_t> random(4096 * static_cast<size_t>(F::kBlockBytes));
  for (auto& byte : random) byte = static_cast<uint8_t>(rng.next());
  EXPECT_EQ(piece_mismatches<F>(random), 0) << "random bytes, 4096 blocks";
  if constexpr (F::kWideSpan == 64) {
    EXPECT_EQ(table_piece_mismatches<F>(v.blocks), 0) << "table pieces, bundled vectors";
    EXPECT_EQ(table_piece_mismatches<F>(random), 0) << "table pieces, random bytes";
  }
}

TEST(Q10WidePiece, Iq3sPiecesAreTheWideDecode) {
  check_format<Iq3S>("iq3_s");
}
TEST(Q10WidePiece, Q2_0PiecesAreTheWideDecode) {
  check_format<Q2_0>("q2_0");
}
// The generic piece (decode_wide itself) on spans of 32 and 16.
TEST(Q10WidePiece, GenericPiecesOfQ4kAndQ6k) {
  check_format<Q4_K>("q4_K");
  check_format<Q6_K>("q6_K");
}

}  // namespace
}  // namespace strata
