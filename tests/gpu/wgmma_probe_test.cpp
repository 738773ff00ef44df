// The wgmma int8 primitive on its own (sm_90a): one m64n128k32 product with A from registers and
// B in the core-matrix layout the fused-hopper kernels write, against the exact host product.
// Skips without an sm_90 device or without a 90a image in the build.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cuda/fused_hopper/hopper_products.hpp"
#include "wgmma_probe.hpp"
#include "gpu_test_util.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

TEST(WgmmaProbe, M64N128K32MatchesTheExactProduct) {
  STRATA_REQUIRE_GPU();
  if (!cuda::fused_hopper::hopper_kernels_loaded()) GTEST_SKIP() << "no sm_90 device or no 90a image";
  const uint64_t seed = test::fresh_seed("wgmma_probe");
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  std::vector<int8_t> a(64 * 32), b(128 * 32);
  for (auto& v : a) v = static_cast<int8_t>(static_cast<int>(rng.uniform() * 255.0) - 127);
  for (auto& v : b) v = static_cast<int8_t>(static_cast<int>(rng.uniform() * 255.0) - 127);
  const auto da = test::to_device(a), db = test::to_device(b);
  cuda::DeviceBuffer<int32_t> dd(64 * 128);
  STRATA_CUDA_CHECK(cudaMemset(dd.get(), 0x7F, 64 * 128 * sizeof(int32_t)));  // poison
  cuda::mma::launch_wgmma_probe(da.get(), db.get(), dd.get(), nullptr);
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  const auto d = test::to_host(dd.get(), 64 * 128);
  int64_t wrong = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 128; ++n) {
      int32_t want = 0;
      for (int k = 0; k < 32; ++k) want += int32_t{a[m * 32 + k]} * int32_t{b[n * 32 + k]};
      wrong += d[m * 128 + n] != want;
    }
  EXPECT_EQ(wrong, 0) << "of 8192 products; first: got " << d[0];
}

}  // namespace
}  // namespace strata
