// The device build of the decoder contract (cuda/blocks/decoder.hpp) against its host build: for
// every sub-block of every bundled vector block (and of random blocks), the fast specialisations
// (table staged in shared memory or read where it lives, both load policies) and the generic
// decoder on the GPU give the host generic decoder's codes and scale bits. Blocks sit 2 bytes past
// an aligned device address, as in GGUF tensor data. Skips without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "decode_vectors.hpp"
#include "formats/registry.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

#if defined(STRATA_MOE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "cuda/blocks/decoders.hpp"
#include "device_decoder_probe.hpp"

namespace strata {
namespace {

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

struct DeviceBytes {
  void* ptr = nullptr;
  explicit DeviceBytes(size_t bytes) {
    EXPECT_EQ(cudaMalloc(&ptr, bytes == 0 ? 1 : bytes), cudaSuccess);
  }
  ~DeviceBytes() { cudaFree(ptr); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
};

struct HostDecode {
  std::vector<uint32_t> words;  // [subs][8]
  std::vector<float> scales;    // [subs]
};

HostDecode host_generic(GgmlType type, const std::vector<uint8_t>& blocks) {
  HostDecode out;
  visit_format<AllBlockFormats>(type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    if constexpr (Int8BlockFormat<F> && !F::kSplitScales && !F::kHasOffset) {
      constexpr int kSubs = F::kBlockValues / kSubBlockValues;
      const int64_t n_blocks = static_cast<int64_t>(blocks.size()) / F::kBlockBytes;
      out.words.resize(static_cast<size_t>(n_blocks * kSubs * 8));
      out.scales.resize(static_cast<size_t>(n_blocks * kSubs));
      for (int64_t b = 0; b < n_blocks; ++b)
        for (int sub = 0; sub < kSubs; ++sub) {
          uint32_t w[8];
          const int64_t task = b * kSubs + sub;
          out.scales[task] = cuda::blocks::decode_sub_block<F, cuda::blocks::GenericDecoder<F>>(
              blocks.data() + b * F::kBlockBytes, sub, nullptr, w);
          std::memcpy(&out.words[task * 8], w, sizeof w);
        }
    }
  });
  return out;
}

// Sub-blocks whose device words or scale bits differ from the host generic decode.
int64_t device_mismatches(GgmlType type, test::DecoderProbe probe,
                          const std::vector<uint8_t>& blocks, int block_bytes) {
  const HostDecode want = host_generic(type, blocks);
  const int64_t n_blocks = static_cast<int64_t>(blocks.size()) / block_bytes;
  const size_t n_subs = want.scales.size();
  EXPECT_GT(n_subs, 0u);
  DeviceBytes d_blocks(blocks.size() + 2), d_words(n_subs * 8 * sizeof(uint32_t)),
      d_scales(n_subs * sizeof(float));
  uint8_t* at = static_cast<uint8_t*>(d_blocks.ptr) + 2;  // 2-byte, not 4-byte, aligned
  EXPECT_EQ(cudaMemcpy(at, blocks.data(), blocks.size(), cudaMemcpyHostToDevice), cudaSuccess);
  // Poisoned outputs: a sub-block the kernel skips cannot pass.
  EXPECT_EQ(cudaMemset(d_words.ptr, 0xA5, n_subs * 8 * sizeof(uint32_t)), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_scales.ptr, 0xFF, n_subs * sizeof(float)), cudaSuccess);
  test::launch_decoder_probe(type, probe, at, n_blocks, static_cast<uint32_t*>(d_words.ptr),
                             static_cast<float*>(d_scales.ptr), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint32_t> words(n_subs * 8);
  std::vector<float> scales(n_subs);
  EXPECT_EQ(cudaMemcpy(words.data(), d_words.ptr, words.size() * sizeof(uint32_t),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(cudaMemcpy(scales.data(), d_scales.ptr, scales.size() * sizeof(float),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  // A NaN scale (random bytes only: the library refuses non-finite scales before any run) may
  // differ in payload: the device's d * multiplier gives the canonical NaN, the host keeps d's.
  int64_t wrong = 0;
  for (size_t t = 0; t < n_subs; ++t)
    wrong += std::memcmp(&words[t * 8], &want.words[t * 8], 8 * sizeof(uint32_t)) != 0 ||
             (test::bits_of(scales[t]) != test::bits_of(want.scales[t]) &&
              !(std::isnan(scales[t]) && std::isnan(want.scales[t])));
  return wrong;
}

struct Case {
  std::string vectors;
  test::DecoderProbe probe;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const char* probe = info.param.probe == test::DecoderProbe::kStagedGlobal    ? "staged_global"
                      : info.param.probe == test::DecoderProbe::kResidentPlain ? "resident_plain"
                                                                               : "generic";
  return info.param.vectors + "_" + probe;
}

class DeviceDecoderGpu : public ::testing::TestWithParam<Case> {};

TEST_P(DeviceDecoderGpu, DeviceDecodeIsTheHostGenericDecode) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const test::DecodeVectors v = test::load_decode_vectors(GetParam().vectors);
  const auto type = static_cast<GgmlType>(v.type_id);
  ASSERT_TRUE(test::decoder_probe_carries(type));
  ASSERT_GT(v.n_blocks, 0);
  EXPECT_EQ(device_mismatches(type, GetParam().probe, v.blocks, v.block_bytes), 0)
      << "bundled vectors, " << v.n_blocks << " blocks";
  const uint64_t seed = test::fresh_seed("device_decoder_gpu/" + GetParam().vectors);
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  std::vector<uint8_t> random(4096 * static_cast<size_t>(v.block_bytes));
  for (auto& byte : random) byte = static_cast<uint8_t>(rng.next());
  EXPECT_EQ(device_mismatches(type, GetParam().probe, random, v.block_bytes), 0)
      << "random bytes, 4096 blocks";
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const char* name : {"iq3_s", "q2_0", "q8_0", "q4_0"})
    for (auto probe : {test::DecoderProbe::kStagedGlobal, test::DecoderProbe::kResidentPlain,
                       test::DecoderProbe::kGeneric})
      all.push_back({name, probe});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Formats, DeviceDecoderGpu, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace strata

#else
TEST(DeviceDecoderGpu, NeedsTheCudaBuild) {
  GTEST_SKIP() << "built without CUDA";
}
#endif
