// The q10 Hopper kernels' weight decode (HalfPiece<F>) against the traits' decode_wide on every
// bundled block of all 25 formats, bitwise: the f16 integers, the span scales and offsets. Blocks
// sit at a 2-byte-aligned (not 4-aligned) device address, as in GGUF tensor data; outputs are
// poisoned first.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "decode_vectors.hpp"
#include "formats/registry.hpp"

#if defined(STRATA_MOE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "half_piece_probe.hpp"

namespace {

using strata::test::DecodeVectors;

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

uint32_t bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

struct DeviceBytes {
  void* ptr = nullptr;
  explicit DeviceBytes(size_t bytes) { EXPECT_EQ(cudaMalloc(&ptr, bytes), cudaSuccess); }
  ~DeviceBytes() { cudaFree(ptr); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr);
  }
};

class HopperQ10Decode : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_P(HopperQ10Decode, PiecesEqualTheWideDecodeBitForBit) {
  const DecodeVectors v = strata::test::load_decode_vectors(GetParam());
  const strata::FormatInfo* f = strata::find_block_format(v.name);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->wide) << v.name << " has no wide decode";
  const int pieces_per_block = v.block_values / 32;
  const size_t n_pieces = static_cast<size_t>(v.n_blocks) * pieces_per_block;
  const int spans = strata::test::half_piece_spans(f->type);
  ASSERT_GE(spans, 1);

  DeviceBytes blocks(v.blocks.size() + 2), w(n_pieces * 32 * sizeof(float)), scale(n_pieces * 2 * sizeof(float)),
      offset(n_pieces * 2 * sizeof(float));
  uint8_t* d_blocks = blocks.as<uint8_t>() + 2;  // 2-byte aligned, not 4
  ASSERT_EQ(cudaMemcpy(d_blocks, v.blocks.data(), v.blocks.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(w.ptr, 0xFF, n_pieces * 32 * sizeof(float)), cudaSuccess);  // NaN poison
  ASSERT_EQ(cudaMemset(scale.ptr, 0xFF, n_pieces * 2 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(offset.ptr, 0xFF, n_pieces * 2 * sizeof(float)), cudaSuccess);
  ASSERT_TRUE(strata::test::launch_half_piece_probe(f->type, d_blocks, v.n_blocks, w.as<float>(), scale.as<float>(),
                                                    offset.as<float>(), nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> got_w(n_pieces * 32), got_scale(n_pieces * 2), got_offset(n_pieces * 2);
  ASSERT_EQ(cudaMemcpy(got_w.data(), w.ptr, got_w.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(got_scale.data(), scale.ptr, got_scale.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(got_offset.data(), offset.ptr, got_offset.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);

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
      if (bits(s.scale) != bits(got_scale[2 * p + j]) || bits(s.offset) != bits(got_offset[2 * p + j])) {
        if (scale_mismatches++ == 0) first = "piece " + std::to_string(p) + " span " + std::to_string(j) + ": scale";
      }
      const int n = S < 32 ? S : 32;
      for (int i = 0; i < n; ++i) {
        const int value = value0 + i;
        const float expected = static_cast<float>(host_w[value % S]);
        if (bits(expected) != bits(got_w[32 * p + (value - first_value)])) {
          if (value_mismatches++ == 0)
            first = "piece " + std::to_string(p) + " value " + std::to_string(value - first_value) + ": w " +
                    std::to_string(got_w[32 * p + (value - first_value)]) + " expected " + std::to_string(expected);
        }
      }
    }
  }
  EXPECT_EQ(value_mismatches, 0) << v.name << ": " << first;
  EXPECT_EQ(scale_mismatches, 0) << v.name << ": " << first;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, HopperQ10Decode, ::testing::ValuesIn(strata::test::decode_vector_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace

#else  // built without the CUDA backend

TEST(HopperQ10Decode, RequiresCudaBuild) {
  GTEST_SKIP() << "built without the CUDA backend";
}

#endif
