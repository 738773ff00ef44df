// Hand-built blocks that pin down one rule each, so a failure names the rule rather than a
// vector index: IQ3_S signs are one bit per value (no parity), f16 scales are converted from
// their bits, and the small scale decoders (E8M0, UE4M3) hit their special cases.
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "formats/all.hpp"

namespace {

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// d = 1.0 (f16 bits 0x3C00), all sub-scales 0 (db = d), every grid index 0 (magnitudes 1), no
// signs.
std::array<uint8_t, strata::Iq3S::kBlockBytes> unit_iq3s_block() {
  std::array<uint8_t, strata::Iq3S::kBlockBytes> block{};
  block[0] = 0x00;
  block[1] = 0x3C;
  EXPECT_EQ(strata::tables::iq3s_grid(0), 0x01010101u)
      << "crafted block assumes grid entry 0 is all ones";
  return block;
}

TEST(FormatsCrafted, Iq3sScaleIsTheF16ValueNotItsBits) {
  const auto block = unit_iq3s_block();
  int8_t q[32];
  strata::SubScale s;
  strata::Iq3S::decode_sub(block.data(), 0, q, s);
  EXPECT_EQ(s.scale[0], 1.0f) << "0x3C00 must read as 1.0, not 15360";
  EXPECT_EQ(s.scale[1], 1.0f);
  float out[256];
  strata::Iq3S::decode(block.data(), out);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(bits_of(out[i]), bits_of(1.0f)) << i;
}

TEST(FormatsCrafted, Iq3sOneSignBitPerValue) {
  for (int v = 0; v < 256; ++v) {
    auto block = unit_iq3s_block();
    block[strata::Iq3S::kSignsOffset + v / 8] = static_cast<uint8_t>(1u << (v % 8));
    float out[256];
    strata::Iq3S::decode(block.data(), out);
    for (int i = 0; i < 256; ++i)
      ASSERT_EQ(bits_of(out[i]), bits_of(i == v ? -1.0f : 1.0f))
          << "sign bit " << v << ", value " << i;
  }
}

TEST(FormatsCrafted, Iq3sSubScaleIsOddMultiple) {
  auto block = unit_iq3s_block();
  block[strata::Iq3S::kScalesOffset + 1] =
      0xF3;  // sub-block 2: s = 3 -> 7d; sub-block 3: s = 15 -> 31d
  float out[256];
  strata::Iq3S::decode(block.data(), out);
  EXPECT_EQ(out[64], 7.0f);
  EXPECT_EQ(out[96], 31.0f);
  EXPECT_EQ(out[0], 1.0f);
}

TEST(FormatsCrafted, Fp16ScaleBitsForSimpleFormats) {
  // Q8_0 with d bits 0x3C00 and q = {1, -1, 127, -128, ...}: y is q itself.
  std::array<uint8_t, strata::Q8_0::kBlockBytes> block{};
  block[1] = 0x3C;
  const int8_t codes[4] = {1, -1, 127, -128};
  for (int i = 0; i < 4; ++i) block[2 + i] = static_cast<uint8_t>(codes[i]);
  float out[32];
  strata::Q8_0::decode(block.data(), out);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], static_cast<float>(codes[i]));
  // f16 subnormal 0x0001 = 2^-24 must survive the conversion exactly.
  block[0] = 0x01;
  block[1] = 0x00;
  strata::Q8_0::decode(block.data(), out);
  EXPECT_EQ(out[0], 0x1p-24f);
  EXPECT_EQ(out[2], 127 * 0x1p-24f);
}

TEST(FormatsCrafted, NegativeZeroSurvivesDecode) {
  // Q1_0 with d = +0: cleared bits give -d = -0.0, set bits +0.0; an added 0.0f offset would
  // turn -0.0 into +0.0.
  std::array<uint8_t, strata::Q1_0::kBlockBytes> block{};
  block[2] = 0x01;
  float out[128];
  strata::Q1_0::decode(block.data(), out);
  EXPECT_EQ(bits_of(out[0]), 0x00000000u);
  EXPECT_EQ(bits_of(out[1]), 0x80000000u);
}

TEST(FormatsCrafted, E8m0HalfSpecialCases) {
  EXPECT_EQ(strata::e8m0_half_to_float(0), 0x1p-128f);
  EXPECT_EQ(strata::e8m0_half_to_float(1), 0x1p-127f);
  EXPECT_EQ(strata::e8m0_half_to_float(2), 0x1p-126f);
  EXPECT_EQ(strata::e8m0_half_to_float(128), 1.0f);
  EXPECT_EQ(strata::e8m0_half_to_float(255), 0x1p127f);
}

TEST(FormatsCrafted, Ue4m3HalfSpecialCases) {
  EXPECT_EQ(bits_of(strata::ue4m3_half_to_float(0x00)), 0u);
  EXPECT_EQ(bits_of(strata::ue4m3_half_to_float(0x7F)), 0u) << "E4M3 NaN decodes as 0";
  EXPECT_EQ(strata::ue4m3_half_to_float(0x01), 0x1p-10f);  // subnormal: 1 * 2^-9 / 2
  EXPECT_EQ(strata::ue4m3_half_to_float(0x07), 7 * 0x1p-10f);
  EXPECT_EQ(strata::ue4m3_half_to_float(0x38), 0.5f);    // E = 7, M = 0: 1.0 / 2
  EXPECT_EQ(strata::ue4m3_half_to_float(0x7E), 224.0f);  // E = 15, M = 6: 1.75 * 256 / 2
  EXPECT_EQ(strata::ue4m3_half_to_float(0xB8), 0.5f) << "bit 7 is ignored";
}

}  // namespace
