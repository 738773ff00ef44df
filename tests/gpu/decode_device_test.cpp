// The device decoders against ggml's to_float on every bundled block, bit for bit: the full
// decode, and the int8 decomposition (codes and scales also equal to the host's, bitwise).
// Blocks sit at a 2-byte-aligned (not 4-aligned) device address, as in GGUF tensor data.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "decode_vectors.hpp"
#include "formats/registry.hpp"

#if defined(STRATA_MOE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "common/error.hpp"
#include "cuda/decode/decode.hpp"

namespace {

using strata::test::DecodeVectors;

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// Owning device allocation for the test; fails the test (not the process) on a CUDA error.
struct DeviceBytes {
  void* ptr = nullptr;
  explicit DeviceBytes(size_t bytes) { EXPECT_EQ(cudaMalloc(&ptr, bytes), cudaSuccess); }
  ~DeviceBytes() { cudaFree(ptr); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  uint8_t* bytes() const { return static_cast<uint8_t*>(ptr); }
};

class DeviceDecode : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  }
};

// Uploads the blocks at offset 2 of a fresh allocation: aligned to 2 bytes, not to 4.
const uint8_t* upload_misaligned(const DecodeVectors& v, DeviceBytes& buffer) {
  EXPECT_EQ(
      cudaMemcpy(buffer.bytes() + 2, v.blocks.data(), v.blocks.size(), cudaMemcpyHostToDevice),
      cudaSuccess);
  return buffer.bytes() + 2;
}

TEST_P(DeviceDecode, DecodeMatchesGgmlBitForBit) {
  const DecodeVectors v = strata::test::load_decode_vectors(GetParam());
  const strata::FormatInfo* f = strata::find_block_format(v.name);
  ASSERT_NE(f, nullptr);
  DeviceBytes blocks(v.blocks.size() + 2);
  DeviceBytes out(v.expected.size() * sizeof(float));
  const uint8_t* d_blocks = upload_misaligned(v, blocks);
  ASSERT_EQ(cudaMemset(out.ptr, 0xFF, v.expected.size() * sizeof(float)),
            cudaSuccess);  // NaN poison
  strata::cuda::decode_blocks_cuda(f->type, d_blocks, v.n_blocks, static_cast<float*>(out.ptr),
                                   nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> got(v.expected.size());
  ASSERT_EQ(cudaMemcpy(got.data(), out.ptr, got.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  std::string report;
  EXPECT_EQ(strata::test::count_bit_mismatches(v, got.data(), report), 0) << v.name << "\n"
                                                                          << report;
}

TEST_P(DeviceDecode, Int8DecompositionMatchesGgmlAndHost) {
  const DecodeVectors v = strata::test::load_decode_vectors(GetParam());
  const strata::FormatInfo* f = strata::find_block_format(v.name);
  ASSERT_NE(f, nullptr);
  if (!f->int8) GTEST_SKIP() << v.name << " has no int8 decomposition";
  const int subs_per_block = v.block_values / 32;
  const size_t n_sub = static_cast<size_t>(v.n_blocks) * subs_per_block;
  DeviceBytes blocks(v.blocks.size() + 2);
  DeviceBytes codes(n_sub * 32);
  DeviceBytes scales(n_sub * 2 * sizeof(float));
  DeviceBytes offsets(n_sub * 2 * sizeof(float));
  const uint8_t* d_blocks = upload_misaligned(v, blocks);
  ASSERT_EQ(cudaMemset(codes.ptr, 0x80, n_sub * 32), cudaSuccess);
  ASSERT_EQ(cudaMemset(scales.ptr, 0xFF, n_sub * 2 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(offsets.ptr, 0xFF, n_sub * 2 * sizeof(float)), cudaSuccess);
  strata::cuda::decode_subblocks_cuda(
      f->type, d_blocks, v.n_blocks, static_cast<int8_t*>(codes.ptr),
      static_cast<float*>(scales.ptr), static_cast<float*>(offsets.ptr), nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<int8_t> q(n_sub * 32);
  std::vector<float> scale(n_sub * 2), offset(n_sub * 2);
  ASSERT_EQ(cudaMemcpy(q.data(), codes.ptr, q.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(
      cudaMemcpy(scale.data(), scales.ptr, scale.size() * sizeof(float), cudaMemcpyDeviceToHost),
      cudaSuccess);
  ASSERT_EQ(
      cudaMemcpy(offset.data(), offsets.ptr, offset.size() * sizeof(float), cudaMemcpyDeviceToHost),
      cudaSuccess);

  std::vector<float> got(v.expected.size());
  int64_t host_differences = 0;
  for (size_t k = 0; k < n_sub; ++k) {
    int8_t host_q[32];
    strata::SubScale host_s;
    f->decode_sub(v.blocks.data() + (k / subs_per_block) * v.block_bytes,
                  static_cast<int>(k % subs_per_block), host_q, host_s);
    for (int h = 0; h < 2; ++h) {
      host_differences +=
          strata::test::bits_of(host_s.scale[h]) != strata::test::bits_of(scale[2 * k + h]);
      host_differences +=
          strata::test::bits_of(host_s.offset[h]) != strata::test::bits_of(offset[2 * k + h]);
    }
    for (int i = 0; i < 32; ++i) {
      host_differences += host_q[i] != q[32 * k + i];
      const float product = scale[2 * k + i / 16] * static_cast<float>(q[32 * k + i]);
      got[32 * k + i] = f->has_offset ? product + offset[2 * k + i / 16] : product;
    }
  }
  EXPECT_EQ(host_differences, 0) << v.name << ": device codes/scales differ from the host's";
  std::string report;
  EXPECT_EQ(strata::test::count_bit_mismatches(v, got.data(), report), 0) << v.name << "\n"
                                                                          << report;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, DeviceDecode,
                         ::testing::ValuesIn(strata::test::decode_vector_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(DeviceDecodeErrors, UnknownTypeIsRejected) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  EXPECT_THROW(
      strata::cuda::decode_blocks_cuda(strata::GgmlType::F16, nullptr, 1, nullptr, nullptr),
      strata::Error);
  // Zero blocks is a no-op, not an error, even with null pointers.
  EXPECT_NO_THROW(
      strata::cuda::decode_blocks_cuda(strata::GgmlType::IQ3_S, nullptr, 0, nullptr, nullptr));
}

}  // namespace

#else  // built without the CUDA backend

TEST(DeviceDecode, RequiresCudaBuild) {
  GTEST_SKIP() << "built without the CUDA backend";
}

#endif
