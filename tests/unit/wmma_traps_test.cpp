// Trap tests of the fused-wmma arm (CPU): one per classic mistake, each run on the very helpers
// the wmma chain kernels call (chain_decode.hpp, chain_stage.hpp, mma_tile_16_layout.hpp), and
// each also run on the faulty variant to show that the check catches it on the same input.
//   (1) IQ3_S signs: one bit per value, not bit 7 of the sign byte for a whole group;
//   (2) f16 scales: the 16 raw bits converted as binary16, not the integer's value;
//   (3) every weight row of a 128-row tile decoded, rows 64-127 too;
//   (4) each 32-value sub-block's fold reads its own scale slot;
//   (5) matrix_b col-major (k, n) at b[n*ld + k], the int32 accumulator stored with ld = 16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cuda/fused_wmma/chain_decode.hpp"
#include "cuda/fused_wmma/chain_stage.hpp"
#include "cuda/fused_wmma/tile_config.hpp"
#include "cuda/mma/mma_tile_16_layout.hpp"
#include "decode_vectors.hpp"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"
#include "pipeline/arith.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

using cuda::fused_wmma::ChainDecoder;
using cuda::fused_wmma::ChainTileDefault;
using cuda::fused_wmma::DecodeFault;
using cuda::fused_wmma::SlotFault;
using cuda::fused_wmma::StageTiles;
using cuda::fused_wmma::WeightRows;
using Tile = ChainTileDefault;

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Decoded values of every sub-block of `blocks` through ChainDecoder<F, Fault> (codes * scale,
// the product the fold applies) that differ bitwise from ggml's to_float output.
template <class F, class Fault>
int64_t chain_decode_mismatches(const test::DecodeVectors& v) {
  int64_t mismatches = 0;
  constexpr int kSubs = F::kBlockValues / 32;
  for (int64_t b = 0; b < v.n_blocks; ++b) {
    const uint8_t* block = v.blocks.data() + b * v.block_bytes;
    for (int sub = 0; sub < kSubs; ++sub) {
      uint32_t words[8];
      const float scale = ChainDecoder<F, Fault>::decode(block, sub, words);
      for (int i = 0; i < 32; ++i) {
        const auto code = static_cast<int8_t>((words[i / 4] >> (8 * (i % 4))) & 0xFF);
        const float value = scale * static_cast<float>(code);
        mismatches += bits(value) !=
                      bits(v.expected[static_cast<size_t>(b * F::kBlockValues + 32 * sub + i)]);
      }
    }
  }
  return mismatches;
}

// ---- (1) IQ3_S sign expansion: one bit per value ------------------------------------------
TEST(WmmaTraps, Iq3sSignsAreOneBitPerValue) {
  // Every sign byte and both groups it serves: byte j of the mask is 0xFF exactly when bit
  // 4*(m%2) + j is set, else 0x00.
  int64_t wrong_masks = 0, faulty_wrong_masks = 0;
  for (int byte = 0; byte < 256; ++byte)
    for (int m = 0; m < 2; ++m) {
      uint32_t expected = 0;
      for (int j = 0; j < 4; ++j)
        if ((byte >> (4 * m + j)) & 1) expected |= 0xFFu << (8 * j);
      wrong_masks += cuda::fused_wmma::iq3s_sign_mask(static_cast<uint8_t>(byte), m) != expected;
      faulty_wrong_masks += cuda::fused_wmma::iq3s_sign_mask<DecodeFault<true, false>>(
                                static_cast<uint8_t>(byte), m) != expected;
    }
  // Against ggml's to_float on every bundled IQ3_S block (the fuzz part runs every sign pattern).
  const test::DecodeVectors v = test::load_decode_vectors("iq3_s");
  const int64_t mismatches = chain_decode_mismatches<Iq3S, cuda::fused_wmma::NoDecodeFault>(v);
  const int64_t faulty = chain_decode_mismatches<Iq3S, DecodeFault<true, false>>(v);
  std::printf(
      "iq3_s sign masks: %lld wrong (bit-7 variant %lld of 512); %lld blocks: %lld values differ "
      "from ggml "
      "(bit-7 variant %lld)\n",
      static_cast<long long>(wrong_masks), static_cast<long long>(faulty_wrong_masks),
      static_cast<long long>(v.n_blocks), static_cast<long long>(mismatches),
      static_cast<long long>(faulty));
  EXPECT_EQ(wrong_masks, 0);
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(faulty_wrong_masks, 0) << "the trap does not tell the bit-7 replication apart";
  EXPECT_GT(faulty, 0) << "the trap does not tell the bit-7 replication apart";
}

// ---- (2) f16 scale fields converted as bits -----------------------------------------------
TEST(WmmaTraps, Fp16ScaleIsConvertedAsBits) {
  struct Known {
    uint16_t raw;
    float value;
  };
  const Known known[] = {{0x3C00, 1.0f},     {0x0001, 5.9604644775390625e-08f}, {0x8000, -0.0f},
                         {0x7BFF, 65504.0f}, {0x3555, 0.333251953125f},         {0xC400, -4.0f}};
  for (const Known& k : known) {
    const uint8_t field[2] = {static_cast<uint8_t>(k.raw & 0xFF), static_cast<uint8_t>(k.raw >> 8)};
    EXPECT_EQ(bits(cuda::fused_wmma::fp16_field(field)), bits(k.value))
        << "raw 0x" << std::hex << k.raw;
    EXPECT_NE(bits(cuda::fused_wmma::fp16_field<DecodeFault<false, true>>(field)), bits(k.value))
        << "the trap does not tell the integer reading apart, raw 0x" << std::hex << k.raw;
  }
  const test::DecodeVectors v = test::load_decode_vectors("iq3_s");
  const int64_t mismatches = chain_decode_mismatches<Iq3S, cuda::fused_wmma::NoDecodeFault>(v);
  const int64_t faulty = chain_decode_mismatches<Iq3S, DecodeFault<false, true>>(v);
  std::printf("iq3_s scales: %lld values differ from ggml (integer-reading variant %lld)\n",
              static_cast<long long>(mismatches), static_cast<long long>(faulty));
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(faulty, 0);
}

// ---- (3) every weight row of the tile decoded ---------------------------------------------
struct StageCheck {
  int64_t wrong_rows = 0;        // rows whose codes or scales differ from decode_sub
  int64_t wrong_upper_rows = 0;  // of them, rows 64..127
};

// Emulates one block decoding stage `stage` of 128 rows (thread by thread, with the kernel's
// helper) and compares every row with F::decode_sub; rows at or past `limit` must be zero.
template <class F, bool OnePass>
StageCheck check_stage(const std::vector<uint8_t>& tensor, size_t row_bytes, int limit, int n_subs,
                       int stage) {
  StageTiles<Tile> st;
  std::memset(&st, 0x5A, sizeof st);  // poison: a row nobody writes keeps 0x5A codes
  WeightRows rows;
  rows.expert_base[0] = tensor.data();
  rows.row_bytes = row_bytes;
  rows.split = Tile::kWeightRows;
  rows.first = 0;
  rows.limit = limit;
  for (int thread = 0; thread < Tile::kThreads; ++thread)
    cuda::fused_wmma::decode_weight_stage<F, Tile, cuda::fused_wmma::NoDecodeFault, OnePass>(
        thread, rows, stage, n_subs, st);
  StageCheck check;
  constexpr int kSubsPerBlock = F::kBlockValues / 32;
  for (int r = 0; r < Tile::kWeightRows; ++r) {
    bool row_ok = true;
    for (int s = 0; s < Tile::kStageSubs; ++s) {
      const int sub = stage * Tile::kStageSubs + s;
      int8_t q[32] = {};
      SubScale scale{{0.0f, 0.0f}, {0.0f, 0.0f}};
      if (r < limit && sub < n_subs)
        F::decode_sub(tensor.data() + r * row_bytes + (sub / kSubsPerBlock) * F::kBlockBytes,
                      sub % kSubsPerBlock, q, scale);
      for (int i = 0; i < 32; ++i) row_ok &= st.weights[2 * s + i / 16][r][i % 16] == q[i];
      row_ok &= bits(st.weight_scale[r][s]) == bits(scale.scale[0]);
    }
    check.wrong_rows += !row_ok;
    check.wrong_upper_rows += !row_ok && r >= 64;
  }
  return check;
}

TEST(WmmaTraps, EveryWeightRowOfTheTileIsDecoded) {
  static_assert(Tile::kWeightRows == 128 && Tile::kWeightRows * Tile::kStageSubs > Tile::kThreads,
                "the trap needs more decode tasks than threads");
  const uint64_t seed = test::fresh_seed("wmma_trap_rows");
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int kD = 1024;  // 4 IQ3_S blocks, 32 sub-blocks, 16 stages per row
  const std::vector<uint8_t> tensor =
      synth::random_expert_tensor(GgmlType::IQ3_S, kD, Tile::kWeightRows, 1, 1.0, seed);
  const size_t row_bytes = kD / Iq3S::kBlockValues * Iq3S::kBlockBytes;
  for (int stage : {0, 7, 15}) {
    const StageCheck full =
        check_stage<Iq3S, false>(tensor, row_bytes, Tile::kWeightRows, kD / 32, stage);
    const StageCheck partial =
        check_stage<Iq3S, false>(tensor, row_bytes, 100, kD / 32, stage);  // rows 100+ absent
    const StageCheck one_pass =
        check_stage<Iq3S, true>(tensor, row_bytes, Tile::kWeightRows, kD / 32, stage);
    std::printf(
        "stage %d: wrong rows %lld (limit 100: %lld); one-pass variant %lld wrong, %lld of them in "
        "64..127\n",
        stage, static_cast<long long>(full.wrong_rows), static_cast<long long>(partial.wrong_rows),
        static_cast<long long>(one_pass.wrong_rows),
        static_cast<long long>(one_pass.wrong_upper_rows));
    EXPECT_EQ(full.wrong_rows, 0);
    EXPECT_EQ(partial.wrong_rows, 0);
    EXPECT_EQ(one_pass.wrong_upper_rows, 64) << "the trap does not tell the one-pass decode apart";
  }
  // Q2_0 (the down format) through the same loader: a 64-value block spans two sub-blocks.
  const std::vector<uint8_t> down =
      synth::random_expert_tensor(GgmlType::Q2_0, 256, Tile::kWeightRows, 1, 1.0, seed + 1);
  const StageCheck q2 =
      check_stage<Q2_0, false>(down, 256 / 64 * Q2_0::kBlockBytes, Tile::kWeightRows, 8, 3);
  EXPECT_EQ(q2.wrong_rows, 0);
}

// ---- (4) each sub-block's fold reads its own scale slot -----------------------------------
template <SlotFault Fault>
std::vector<float> fold_row(const std::vector<int32_t>& dots, const std::vector<float>& w_scales,
                            const std::vector<float>& a_scales) {
  // The kernel's view: per stage, [kStageSubs] slots of the row and of the pair.
  const int n_subs = static_cast<int>(dots.size());
  std::vector<float> partial;
  float acc = 0.0f;
  for (int stage = 0; stage * Tile::kStageSubs < n_subs; ++stage) {
    float w_slots[Tile::kStageSubs], a_slots[Tile::kStageSubs];
    for (int s = 0; s < Tile::kStageSubs; ++s) {
      w_slots[s] = w_scales[static_cast<size_t>(stage * Tile::kStageSubs + s)];
      a_slots[s] = a_scales[static_cast<size_t>(stage * Tile::kStageSubs + s)];
    }
    for (int s = 0; s < Tile::kStageSubs; ++s) {
      acc = cuda::fused_wmma::fold_chain<Iq3S, Fault>(
          acc, dots[static_cast<size_t>(stage * Tile::kStageSubs + s)], w_slots, a_slots, s,
          Tile::kStageSubs);
      partial.push_back(acc);
    }
  }
  return partial;
}

TEST(WmmaTraps, EachSubBlockFoldReadsItsOwnScale) {
  const uint64_t seed = test::fresh_seed("wmma_trap_slots");
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  constexpr int kSubs = 16;  // K = 512
  std::vector<int32_t> dots(kSubs);
  std::vector<float> w_scales(kSubs), a_scales(kSubs);
  for (int s = 0; s < kSubs; ++s) {
    dots[s] = static_cast<int32_t>(rng.next() % 60001) - 30000;
    w_scales[s] = static_cast<float>(0.001 + rng.uniform()) * static_cast<float>(1 + 2 * (s % 16));
    a_scales[s] = static_cast<float>(0.01 + rng.uniform());
  }
  // Reference: fold_slice<F> per sub-block with that sub-block's scales, in order.
  std::vector<float> expected;
  float acc = 0.0f;
  for (int s = 0; s < kSubs; ++s) {
    SubScale w{{w_scales[s], w_scales[s]}, {0.0f, 0.0f}};
    const int32_t isum[2] = {dots[s], 0}, asum[2] = {0, 0};
    acc = fold_slice<Iq3S>(acc, isum, asum, w, a_scales[s]);
    expected.push_back(acc);
  }
  auto differing = [&](const std::vector<float>& got) {
    int64_t n = 0;
    for (size_t i = 0; i < got.size(); ++i) n += bits(got[i]) != bits(expected[i]);
    return n;
  };
  const int64_t own = differing(fold_row<SlotFault::kOwn>(dots, w_scales, a_scales));
  const int64_t per16 = differing(fold_row<SlotFault::kPer16>(dots, w_scales, a_scales));
  const int64_t neighbour = differing(fold_row<SlotFault::kNeighbour>(dots, w_scales, a_scales));
  std::printf(
      "fold partial sums differing from fold_slice: own slot %lld, per-16 slot %lld, neighbour "
      "%lld (of %d)\n",
      static_cast<long long>(own), static_cast<long long>(per16), static_cast<long long>(neighbour),
      kSubs);
  EXPECT_EQ(own, 0);
  EXPECT_GT(per16, 0) << "the trap does not tell the per-16 slot apart";
  EXPECT_GT(neighbour, 0) << "the trap does not tell the neighbour's slot apart";
}

// ---- (5) matrix_b col-major, accumulator stored with ld = 16 ------------------------------
template <mma::TileFault Fault>
int64_t tile_product_mismatches(const int8_t* a, const int8_t* b) {
  int32_t c[mma::kTile16Elems] = {};
  mma::tile_product_host<Fault>(a, 16, b, 16, c);
  int64_t mismatches = 0;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      // Plain definition: A row m (k contiguous), B column n stored contiguously in k.
      int32_t dot = 0;
      for (int k = 0; k < 16; ++k) dot += int32_t{a[m * 16 + k]} * int32_t{b[n * 16 + k]};
      mismatches += c[m * 16 + n] != dot;
    }
  return mismatches;
}

TEST(WmmaTraps, TileProductIndexingIsColMajorBAndRowMajorC) {
  EXPECT_EQ(mma::b_index(3, 5, 16), 5 * 16 + 3);
  EXPECT_EQ(mma::c_index(3, 5), 3 * 16 + 5);
  EXPECT_EQ(mma::a_index(3, 5, 16), 3 * 16 + 5);
  // The lanes' read-back covers every accumulator element exactly once.
  std::vector<int> seen(mma::kTile16Elems, 0);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < mma::kOwnedPerLane; ++i)
      ++seen[mma::c_index(mma::owned_row(lane, i), mma::owned_col(lane, i))];
  for (int e = 0; e < mma::kTile16Elems; ++e) EXPECT_EQ(seen[e], 1) << "element " << e;

  const uint64_t seed = test::fresh_seed("wmma_trap_tile");
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  int8_t a[mma::kTile16Elems], b[mma::kTile16Elems];
  for (int i = 0; i < mma::kTile16Elems; ++i) {
    a[i] = static_cast<int8_t>(static_cast<int>(rng.next() % 255) - 127);
    b[i] = static_cast<int8_t>(static_cast<int>(rng.next() % 255) - 127);
  }
  const int64_t good = tile_product_mismatches<mma::TileFault::kNone>(a, b);
  const int64_t b_row_major = tile_product_mismatches<mma::TileFault::kBRowMajor>(a, b);
  const int64_t c_col_major = tile_product_mismatches<mma::TileFault::kCColMajor>(a, b);
  std::printf(
      "tile product mismatches: %lld; B read row-major %lld, C stored col-major %lld (of 256)\n",
      static_cast<long long>(good), static_cast<long long>(b_row_major),
      static_cast<long long>(c_col_major));
  EXPECT_EQ(good, 0);
  EXPECT_GT(b_row_major, 0);
  EXPECT_GT(c_col_major, 0);
}

// The whole chain of one work item on the host -- stage decode and gather into plain tiles, two
// tile products per sub-block, the per-element fold -- against fold_slice over decode_sub codes.
TEST(WmmaTraps, HostChainOfOneItemMatchesTheFoldContract) {
  const uint64_t seed = test::fresh_seed("wmma_trap_chain");
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int kD = 512, kSubs = kD / 32;
  const std::vector<uint8_t> tensor =
      synth::random_expert_tensor(GgmlType::IQ3_S, kD, Tile::kWeightRows, 1, 1.0, seed);
  const size_t row_bytes = kD / Iq3S::kBlockValues * Iq3S::kBlockBytes;
  const std::vector<float> x = synth::random_activations(Tile::kPairs, kD, seed + 1);
  std::vector<int8_t> codes(static_cast<size_t>(Tile::kPairs * kD));
  std::vector<float> scales(static_cast<size_t>(Tile::kPairs * kSubs));
  for (int p = 0; p < Tile::kPairs; ++p)
    for (int s = 0; s < kSubs; ++s) {
      int32_t sums[2];
      quantize_block32(&x[static_cast<size_t>(p * kD + 32 * s)],
                       &codes[static_cast<size_t>(p * kD + 32 * s)],
                       &scales[static_cast<size_t>(p * kSubs + s)], sums);
    }
  int32_t act_row[Tile::kPairs];
  for (int p = 0; p < Tile::kPairs; ++p)
    act_row[p] = (p < 29) ? Tile::kPairs - 1 - p : -1;  // 3 padding pairs
  WeightRows rows;
  rows.expert_base[0] = tensor.data();
  rows.row_bytes = row_bytes;
  rows.split = Tile::kWeightRows;
  rows.limit = Tile::kWeightRows;

  std::vector<float> acc(static_cast<size_t>(Tile::kWeightRows * Tile::kPairs),
                         0.0f);  // [row][pair]
  StageTiles<Tile> st;
  for (int stage = 0; stage * Tile::kStageSubs < kSubs; ++stage) {
    std::memset(&st, 0x5A, sizeof st);
    for (int thread = 0; thread < Tile::kThreads; ++thread) {
      cuda::fused_wmma::decode_weight_stage<Iq3S, Tile>(thread, rows, stage, kSubs, st);
      cuda::fused_wmma::gather_act_stage<Tile>(thread, act_row, codes.data(), scales.data(), kD,
                                               stage, st);
    }
    for (int s = 0; s < Tile::kStageSubs; ++s)
      for (int row0 = 0; row0 < Tile::kWeightRows; row0 += 16)
        for (int pair0 = 0; pair0 < Tile::kPairs; pair0 += 16) {
          int32_t c[mma::kTile16Elems] = {};
          for (int half = 0; half < 2; ++half)
            mma::tile_product_host(&st.weights[2 * s + half][0][0] + mma::a_index(row0, 0, 16), 16,
                                   &st.acts[2 * s + half][0][0] + mma::b_index(0, pair0, 16), 16,
                                   c);
          for (int m = 0; m < 16; ++m)
            for (int n = 0; n < 16; ++n) {
              float& out = acc[static_cast<size_t>((row0 + m) * Tile::kPairs + pair0 + n)];
              out = cuda::fused_wmma::fold_chain<Iq3S>(
                  out, c[mma::c_index(m, n)], st.weight_scale[row0 + m], st.act_scale[pair0 + n], s,
                  Tile::kStageSubs);
            }
        }
  }
  int64_t differing = 0, nonzero_padding = 0;
  for (int r = 0; r < Tile::kWeightRows; ++r)
    for (int p = 0; p < Tile::kPairs; ++p) {
      const float got = acc[static_cast<size_t>(r * Tile::kPairs + p)];
      if (act_row[p] < 0) {
        nonzero_padding += bits(got) != 0u;
        continue;
      }
      float expected = 0.0f;
      for (int sub = 0; sub < kSubs; ++sub) {
        int8_t q[32];
        SubScale w;
        Iq3S::decode_sub(tensor.data() + r * row_bytes + (sub / 8) * Iq3S::kBlockBytes, sub % 8, q,
                         w);
        int32_t dot = 0;
        for (int i = 0; i < 32; ++i)
          dot +=
              int32_t{q[i]} * int32_t{codes[static_cast<size_t>(act_row[p] * kD + 32 * sub + i)]};
        const int32_t isum[2] = {dot, 0}, asum[2] = {0, 0};
        expected = fold_slice<Iq3S>(expected, isum, asum, w,
                                    scales[static_cast<size_t>(act_row[p] * kSubs + sub)]);
      }
      differing += bits(got) != bits(expected);
    }
  std::printf(
      "host chain of one 128 x 32 item: %lld elements differ from the fold contract, %lld padding "
      "elements not exactly zero\n",
      static_cast<long long>(differing), static_cast<long long>(nonzero_padding));
  EXPECT_EQ(differing, 0);
  EXPECT_EQ(nonzero_padding, 0);
}

}  // namespace
}  // namespace strata
