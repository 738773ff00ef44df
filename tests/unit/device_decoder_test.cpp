// The device decoder contract (cuda/blocks/decoder.hpp), host build of the device code: every fast
// specialisation gives the generic decoder's codes and scale bits on every sub-block of the bundled
// vector blocks and of random blocks; the generic decoder reproduces ggml's to_float (codes times
// scale, bit for bit) for every format it serves; and the 1.5 * 2^23 step of the fold is exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/blocks/decoders.hpp"
#include "decode_vectors.hpp"
#include "formats/registry.hpp"
#include "pipeline/arith.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

using cuda::blocks::DeviceDecoder;
using cuda::blocks::GenericDecoder;

template <class F>
constexpr bool kGenericServes = Int8BlockFormat<F> && !F::kSplitScales && !F::kHasOffset;

template <class Decoder>
std::vector<uint32_t> table_of() {
  std::vector<uint32_t> table(Decoder::kTableWords);
  for (int i = 0; i < Decoder::kTableWords; ++i) table[i] = Decoder::table_word(i);
  return table;
}

// Sub-blocks whose words or scale bits differ between the specialisation (staged table, and its
// resident table) and the generic decoder; both load policies of the specialisation.
template <class F>
int64_t specialisation_mismatches(const uint8_t* blocks, int64_t n_blocks) {
  using Fast = DeviceDecoder<F>;
  using Generic = GenericDecoder<F>;
  const std::vector<uint32_t> staged = table_of<Fast>();
  int64_t wrong = 0;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* block = blocks + b * F::kBlockBytes;
    for (int sub = 0; sub < F::kBlockValues / kSubBlockValues; ++sub) {
      uint32_t want[8], got_global[8], got_plain[8], got_resident[8];
      const float want_scale =
          cuda::blocks::decode_sub_block<F, Generic>(block, sub, nullptr, want);
      float scale_global = 0.0f;
      Fast::decode(Fast::load_raw(block, sub, cuda::blocks::GlobalLoad{}), staged.data(),
                   got_global, scale_global);
      const float scale_plain =
          cuda::blocks::decode_sub_block<F, Fast>(block, sub, staged.data(), got_plain);
      const float scale_resident =
          cuda::blocks::decode_sub_block<F, Fast>(block, sub, Fast::resident_table(), got_resident);
      const bool same = std::memcmp(want, got_global, sizeof want) == 0 &&
                        std::memcmp(want, got_plain, sizeof want) == 0 &&
                        std::memcmp(want, got_resident, sizeof want) == 0 &&
                        test::bits_of(scale_global) == test::bits_of(want_scale) &&
                        test::bits_of(scale_plain) == test::bits_of(want_scale) &&
                        test::bits_of(scale_resident) == test::bits_of(want_scale);
      wrong += !same;
    }
  }
  return wrong;
}

// Every |code| within the decoder's kMaxAbsCode (the bound the fold's exact step is sized for).
template <class F>
int64_t codes_over_bound(const uint8_t* blocks, int64_t n_blocks) {
  using Fast = DeviceDecoder<F>;
  const std::vector<uint32_t> table = table_of<Fast>();
  int64_t over = 0;
  for (int64_t b = 0; b < n_blocks; ++b)
    for (int sub = 0; sub < F::kBlockValues / kSubBlockValues; ++sub) {
      uint32_t words[8];
      cuda::blocks::decode_sub_block<F, Fast>(blocks + b * F::kBlockBytes, sub, table.data(),
                                              words);
      for (int i = 0; i < 32; ++i) {
        const int code = static_cast<int8_t>(words[i / 4] >> (8 * (i % 4)));
        over += std::abs(code) > Fast::kMaxAbsCode;
      }
    }
  return over;
}

template <class F>
void check_specialisation(const std::string& vectors_name) {
  SCOPED_TRACE(F::kName);
  const test::DecodeVectors v = test::load_decode_vectors(vectors_name);
  ASSERT_EQ(v.block_bytes, F::kBlockBytes);
  ASSERT_GT(v.n_blocks, 0);
  EXPECT_EQ(specialisation_mismatches<F>(v.blocks.data(), v.n_blocks), 0)
      << "bundled vectors, " << v.n_blocks << " blocks";
  EXPECT_EQ(codes_over_bound<F>(v.blocks.data(), v.n_blocks), 0);
  const uint64_t seed = test::fresh_seed(std::string("device_decoder/") + F::kName);
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  std::vector<uint8_t> random(4096 * static_cast<size_t>(F::kBlockBytes));
  for (auto& byte : random) byte = static_cast<uint8_t>(rng.next());
  EXPECT_EQ(specialisation_mismatches<F>(random.data(), 4096), 0) << "random bytes, 4096 blocks";
  EXPECT_EQ(codes_over_bound<F>(random.data(), 4096), 0);
}

TEST(DeviceDecoder, Iq3sSpecialisationIsTheGenericDecoder) {
  check_specialisation<Iq3S>("iq3_s");
}
TEST(DeviceDecoder, Q2_0SpecialisationIsTheGenericDecoder) {
  check_specialisation<Q2_0>("q2_0");
}

// A wrong specialisation must be caught: the same comparison against a decoder that drops one sign.
TEST(DeviceDecoder, ComparisonCatchesAWrongSign) {
  const test::DecodeVectors v = test::load_decode_vectors("iq3_s");
  const std::vector<uint32_t> table = table_of<DeviceDecoder<Iq3S>>();
  int64_t differing = 0;
  for (int64_t b = 0; b < v.n_blocks; ++b) {
    const uint8_t* block = v.blocks.data() + b * Iq3S::kBlockBytes;
    auto raw = DeviceDecoder<Iq3S>::load_raw(block, 0);
    raw.signs &= ~1u;  // value 0 always positive
    uint32_t got[8], want[8];
    float scale = 0.0f;
    DeviceDecoder<Iq3S>::decode(raw, table.data(), got, scale);
    cuda::blocks::decode_sub_block<Iq3S, GenericDecoder<Iq3S>>(block, 0, nullptr, want);
    differing += std::memcmp(got, want, sizeof got) != 0;
  }
  EXPECT_GT(differing, 0);
}

// The generic decoder, codes times scale, is ggml's to_float bit for bit on every bundled vector
// block of every format it serves.
TEST(DeviceDecoder, GenericDecoderIsTheReferenceDecodeOfEveryServedFormat) {
  int formats = 0;
  for (const std::string& name : test::decode_vector_names()) {
    const test::DecodeVectors v = test::load_decode_vectors(name);
    visit_format<AllBlockFormats>(static_cast<GgmlType>(v.type_id), [&](auto tag) {
      using F = typename decltype(tag)::Format;
      if constexpr (kGenericServes<F>) {
        SCOPED_TRACE(F::kName);
        ++formats;
        ASSERT_EQ(v.block_bytes, F::kBlockBytes);
        std::vector<float> got(v.expected.size());
        for (int64_t b = 0; b < v.n_blocks; ++b)
          for (int sub = 0; sub < F::kBlockValues / kSubBlockValues; ++sub) {
            uint32_t words[8];
            const float scale = cuda::blocks::decode_sub_block<F, GenericDecoder<F>>(
                v.blocks.data() + b * F::kBlockBytes, sub, nullptr, words);
            for (int i = 0; i < 32; ++i)
              got[b * F::kBlockValues + kSubBlockValues * sub + i] =
                  scale * static_cast<float>(static_cast<int8_t>(words[i / 4] >> (8 * (i % 4))));
          }
        std::string report;
        EXPECT_EQ(test::count_bit_mismatches(v, got.data(), report), 0) << report;
      }
    });
  }
  EXPECT_GE(formats, 4);  // at least iq3_s, q2_0, q8_0, q4_0
}

// unbias_dot: the dot accumulated onto 1.5 * 2^23 comes back as static_cast<float>(dot), for
// every dot the bound allows.
TEST(DeviceDecoder, DotBiasStepIsExact) {
  int64_t wrong = 0;
  for (int32_t dot = -kDotBiasMaxAbs; dot <= kDotBiasMaxAbs; ++dot)
    wrong +=
        test::bits_of(unbias_dot(kDotBiasBits + dot)) != test::bits_of(static_cast<float>(dot));
  EXPECT_EQ(wrong, 0);
  // Past the bound the ulp of the biased float is 2: the step would round, so the bound is tight.
  EXPECT_NE(test::bits_of(unbias_dot(kDotBiasBits + kDotBiasMaxAbs + 2)),
            test::bits_of(static_cast<float>(kDotBiasMaxAbs + 2)));
  static_assert(32 * 127 * 128 <= kDotBiasMaxAbs, "any int8 slice dot fits the exact step");
}

}  // namespace
}  // namespace strata
