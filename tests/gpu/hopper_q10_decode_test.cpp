// The q10 Hopper kernels' weight decode (HalfPiece<F>) against the traits' decode_wide on every
// bundled block of all 25 formats, bitwise: the f16 integers, the span scales and offsets. The
// blocks sit once at a 16-byte-aligned device address (the fast loads) and once at a 2-byte-aligned
// (not 4-aligned) one, as a GGUF tensor may; outputs are poisoned first.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "common/bytes.hpp"
#include "decode_vectors.hpp"
#include "formats/registry.hpp"

#if defined(STRATA_MOE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/common/device_buffer.hpp"
#include "gpu_test_util.hpp"
#include "half_piece_probe.hpp"

namespace strata {
namespace {

using test::DecodeVectors;

class HopperQ10Decode : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  void SetUp() override { STRATA_REQUIRE_GPU(); }
};

TEST_P(HopperQ10Decode, PiecesEqualTheWideDecodeBitForBit) {
  const DecodeVectors v = strata::test::load_decode_vectors(std::get<0>(GetParam()));
  const int misalign = std::get<1>(GetParam());  // bytes past a 256-byte-aligned allocation
  const strata::FormatInfo* f = strata::find_block_format(v.name);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->wide) << v.name << " has no wide decode";
  const int pieces_per_block = v.block_values / 32;
  const size_t n_pieces = static_cast<size_t>(v.n_blocks) * pieces_per_block;
  const int spans = strata::test::half_piece_spans(f->type);
  ASSERT_GE(spans, 1);

  // Blocks at base + misalign; outputs NaN-poisoned.
  cuda::DeviceBuffer<uint8_t> blocks(v.blocks.size() + 16);
  cuda::DeviceBuffer<float> w(n_pieces * 32), scale(n_pieces * 2), offset(n_pieces * 2);
  uint8_t* d_blocks = blocks.get() + misalign;
  STRATA_CUDA_CHECK(cudaMemcpy(d_blocks, v.blocks.data(), v.blocks.size(), cudaMemcpyHostToDevice));
  test::poison_device(w.get(), n_pieces * 32);
  test::poison_device(scale.get(), n_pieces * 2);
  test::poison_device(offset.get(), n_pieces * 2);
  ASSERT_TRUE(strata::test::launch_half_piece_probe(f->type, d_blocks, v.n_blocks, w.get(), scale.get(), offset.get(),
                                                    nullptr));
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got_w = test::to_host(w.get(), n_pieces * 32);
  const std::vector<float> got_scale = test::to_host(scale.get(), n_pieces * 2);
  const std::vector<float> got_offset = test::to_host(offset.get(), n_pieces * 2);

  const int S = f->wide_span;
  int64_t value_mismatches = 0, scale_mismatches = 0;
  std::string first;
  std::vector<int16_t> host_w(S);
  for (size_t p = 0; p < n_pieces; ++p) {
    const uint8_t* block = v.blocks.data() + (p / pieces_per_block) * v.block_bytes;
    const int first_value = 32 * static_cast<int>(p % pieces_per_block);
    for (int j = 0; j < spans; ++j) {
      const int value0 = first_value + j * S;  // first value of the j-th span the piece touches
      strata::WideScale s;
      f->decode_wide(block, value0 / S, host_w.data(), s);
      if (test::bits_of(s.scale) != test::bits_of(got_scale[2 * p + j]) || test::bits_of(s.offset) != test::bits_of(got_offset[2 * p + j])) {
        if (scale_mismatches++ == 0) first = "piece " + std::to_string(p) + " span " + std::to_string(j) + ": scale";
      }
      const int n = S < 32 ? S : 32;
      for (int i = 0; i < n; ++i) {
        const int value = value0 + i;
        const float expected = static_cast<float>(host_w[value % S]);
        if (test::bits_of(expected) != test::bits_of(got_w[32 * p + (value - first_value)])) {
          if (value_mismatches++ == 0)
            first = "piece " + std::to_string(p) + " value " + std::to_string(value - first_value) + ": w " +
                    std::to_string(got_w[32 * p + (value - first_value)]) + " expected " + std::to_string(expected);
        }
      }
    }
  }
  EXPECT_EQ(value_mismatches, 0) << v.name << " at +" << misalign << ": " << first;
  EXPECT_EQ(scale_mismatches, 0) << v.name << " at +" << misalign << ": " << first;
}

// The scales' f16 conversion of the pieces against the host's on all 65536 bit patterns: zeros,
// subnormals, infinities and NaN payloads included.
TEST(HopperQ10DecodeScales, ConversionEqualsTheHostOnEveryF16) {
  STRATA_REQUIRE_GPU();
  cuda::DeviceBuffer<float> out(65536);
  test::poison_device(out.get(), 65536);
  strata::test::launch_f16_select_probe(out.get(), nullptr);
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got = test::to_host(out.get(), 65536);
  int64_t mismatches = 0;
  uint32_t first = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float expected = fp16_bits_to_float(static_cast<uint16_t>(h));
    if (test::bits_of(got[h]) != test::bits_of(expected) && mismatches++ == 0) first = h;
  }
  EXPECT_EQ(mismatches, 0) << "first at f16 bits 0x" << std::hex << first;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, HopperQ10Decode,
                         ::testing::Combine(::testing::ValuesIn(strata::test::decode_vector_names()),
                                            ::testing::Values(0, 2)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
                           return std::get<0>(info.param) + "_at_" + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace strata

#else  // built without the CUDA backend

TEST(HopperQ10Decode, RequiresCudaBuild) {
  GTEST_SKIP() << "built without the CUDA backend";
}

#endif
