// The device q10 activation quantiser (cuda/pipeline/quantize_rows_q10.hpp) against the host rule
// quantize_block_q10 (pipeline/arith_q10.hpp), bitwise: codes (as f16 bits), scales and code sums
// per 16, on rows with zero blocks, huge and tiny (subnormal) magnitudes, single-value blocks,
// signed zeros, an infinity and a NaN, and row lengths 32 * odd so every row ends in a 32-value
// block. Outputs are poisoned first (values no block can produce). Skips without a device.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cuda/pipeline/quantize_rows_q10.hpp"
#include "gpu_test_util.hpp"
#include "pipeline/arith_q10.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

struct Shape {
  int64_t rows, cols;
};

// Block `b` of a row gets one of these characters, by a seeded draw.
float value_for(int kind, synth::Rng& rng, int i) {
  const float g = static_cast<float>(rng.normal());
  switch (kind) {
    case 0:
      return 0.0f;  // all-zero block: d = 0, q = 0
    case 1:
      return g * 3.0e37f;  // huge (amax / 511 stays finite)
    case 2:
      return g * 1.0e-38f;  // tiny: subnormal inputs, subnormal d
    case 3:
      return i == 5 ? -g : 0.0f;  // one non-zero value
    case 4:
      return (i % 2) ? -0.0f : 0.0f;  // signed zeros only
    case 5:
      return i == 7 ? std::numeric_limits<float>::infinity() : g;  // d = inf
    case 6:
      return i == 3 ? std::numeric_limits<float>::quiet_NaN() : g;  // d NaN (the max keeps it)
    case 7:
      return i == 0
                 ? 1022.0f
                 : static_cast<float>(2 * (static_cast<int>(g * 100.0f) % 500) + 1);  // d = 2: ties
    default:
      return g * std::ldexp(1.0f, static_cast<int>(rng.uniform() * 40.0) - 20);
  }
}

TEST(QuantizeRowsQ10, BitwiseEqualToTheHostRule) {
  STRATA_REQUIRE_GPU();
  const uint64_t seed = test::fresh_seed("quantize_rows_q10");
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  for (const Shape shape : {Shape{1, 32}, Shape{3, 96}, Shape{17, 224}, Shape{64, 1056},
                            Shape{129, 2080}, Shape{5, 2048}}) {
    SCOPED_TRACE("rows " + std::to_string(shape.rows) + " cols " + std::to_string(shape.cols));
    const int64_t rows = shape.rows, cols = shape.cols;
    const int64_t blocks_per_row = q10_blocks_per_row(cols);
    std::vector<float> x(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t b = 0; b < blocks_per_row; ++b) {
        const int kind = static_cast<int>(rng.uniform() * 12.0);  // 8-11: plain random scales
        for (int i = 0; i < q10_block_values(cols, b); ++i)
          x[r * cols + b * kQ10BlockValues + i] = value_for(kind, rng, i);
      }

    // The host rule, block by block.
    std::vector<int16_t> want_codes(x.size());
    std::vector<float> want_scales(static_cast<size_t>(rows * blocks_per_row));
    std::vector<int32_t> want_sums(static_cast<size_t>(rows * cols / kQ10SumValues));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t b = 0; b < blocks_per_row; ++b) {
        const int64_t first = r * cols + b * kQ10BlockValues;
        quantize_block_q10(&x[first], q10_block_values(cols, b), &want_codes[first],
                           &want_scales[r * blocks_per_row + b], &want_sums[first / kQ10SumValues]);
      }

    const auto dx = test::to_device(x);
    cuda::DeviceBuffer<__half> codes(x.size());
    cuda::DeviceBuffer<float> scales(want_scales.size());
    cuda::DeviceBuffer<int32_t> sums(want_sums.size());
    STRATA_CUDA_CHECK(cudaMemset(codes.get(), 0xFF, x.size() * sizeof(__half)));  // f16 NaN
    test::poison_device(scales.get(), want_scales.size());                        // f32 NaN
    STRATA_CUDA_CHECK(
        cudaMemset(sums.get(), 0x7F, want_sums.size() * sizeof(int32_t)));  // > 16 * 511
    cuda::launch_quantize_rows_q10(dx.get(), rows, cols, codes.get(), scales.get(), sums.get(),
                                   nullptr);
    STRATA_CUDA_CHECK(cudaDeviceSynchronize());
    const auto got_codes = test::to_host(codes.get(), x.size());
    const auto got_scales = test::to_host(scales.get(), want_scales.size());
    const auto got_sums = test::to_host(sums.get(), want_sums.size());

    int64_t wrong_codes = 0, wrong_scales = 0, wrong_sums = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      uint16_t bits;
      std::memcpy(&bits, &got_codes[i], sizeof bits);
      wrong_codes += bits != synth::float_to_fp16_bits(static_cast<float>(want_codes[i]));
    }
    for (size_t i = 0; i < want_scales.size(); ++i)
      wrong_scales += std::memcmp(&got_scales[i], &want_scales[i], sizeof(float)) != 0;
    for (size_t i = 0; i < want_sums.size(); ++i) wrong_sums += got_sums[i] != want_sums[i];
    EXPECT_EQ(wrong_codes, 0) << "of " << x.size();
    EXPECT_EQ(wrong_scales, 0) << "of " << want_scales.size();
    EXPECT_EQ(wrong_sums, 0) << "of " << want_sums.size();
  }
}

TEST(QuantizeRowsQ10, RejectsRowsThatAreNotWholeSubBlocks) {  // checked before any CUDA call
  EXPECT_THROW(cuda::launch_quantize_rows_q10(nullptr, 1, 48, nullptr, nullptr, nullptr, nullptr),
               Error);
}

TEST(QuantizeRowsQ10, RejectsRowsThatAreNotSixteenByteAligned) {  // checked before any CUDA call
  // An address that is never dereferenced: the check refuses it first.
  const auto* x = reinterpret_cast<const float*>(uintptr_t{4096 + 8});
  EXPECT_THROW(cuda::launch_quantize_rows_q10(x, 1, 64, nullptr, nullptr, nullptr, nullptr), Error);
}

}  // namespace
}  // namespace strata
