// CPU building blocks: the tile decoder (including the AVX2 fast paths) gives the bytes of the
// format's decode_sub, and the int8 dot is exact at the extremes of the code ranges.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "cpu/int8_dot.hpp"
#include "cpu/tile_ops.hpp"
#include "formats/registry.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/quantize.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

TEST(CpuTile, DecodeRowsMatchesDecodeSubForEveryInt8Format) {
  const uint64_t seed = test::fresh_seed("tile_decode");
  for (const FormatInfo& f : block_formats()) {
    if (!f.int8 || !synth::synth_supports(f.type)) continue;
    SCOPED_TRACE(std::string(f.name) + " seed " + std::to_string(seed));
    const int64_t in = 512, rows = 6, experts = 2;
    const auto bytes = synth::random_expert_tensor(f.type, in, rows, experts, 0.1, seed);
    const ExpertTensor t = make_expert_tensor("t", f.type, bytes.data(), in, rows, experts);
    cpu::DecodedRows tile;
    cpu::format_ops(f.type, "t").decode_rows(t, 1, 2, 3, tile);  // expert 1, rows 2..4
    ASSERT_EQ(tile.rows, 3);
    int64_t code_diffs = 0, scale_diffs = 0;
    for (int r = 0; r < 3; ++r)
      for (int64_t s = 0; s < in / 32; ++s) {
        const int64_t block = s * 32 / f.block_values;
        const int sub = static_cast<int>(s % (f.block_values / 32));
        int8_t q[32];
        SubScale sc;
        f.decode_sub(t.row(1, 2 + r) + block * f.block_bytes, sub, q, sc);
        code_diffs += std::memcmp(q, tile.codes.data() + r * in + s * 32, 32) != 0;
        scale_diffs += std::memcmp(&sc, &tile.scales[r * (in / 32) + s], sizeof sc) != 0;
      }
    EXPECT_EQ(code_diffs, 0);
    EXPECT_EQ(scale_diffs, 0);
  }
}

TEST(CpuTile, DotHalvesIsExactIncludingExtremes) {
  const uint64_t seed = test::fresh_seed("dot");
  std::mt19937_64 rng(seed);
  for (int n_sub : {1, 3, 4, 7, 64}) {
    std::vector<int8_t> w(32 * n_sub), a(32 * n_sub);
    for (int trial = 0; trial < 20; ++trial) {
      for (size_t i = 0; i < w.size(); ++i) {
        // Extremes often: -128 weights (Q8_0 can hold it), +-127 activations (the clamp).
        w[i] = trial % 2 == 0 ? static_cast<int8_t>(-128)
                              : static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
        a[i] = trial % 4 < 2 ? static_cast<int8_t>(rng() % 2 ? 127 : -127)
                             : static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
      }
      std::vector<int32_t> got(2 * n_sub, 0x7fffffff);
      cpu::dot_halves(w.data(), a.data(), n_sub, got.data());
      for (int s = 0; s < n_sub; ++s)
        for (int h = 0; h < 2; ++h) {
          int32_t want = 0;
          for (int i = 0; i < 16; ++i)
            want += int32_t{w[32 * s + 16 * h + i]} * a[32 * s + 16 * h + i];
          ASSERT_EQ(got[2 * s + h], want)
              << "seed " << seed << " n_sub " << n_sub << " sub " << s << " half " << h;
        }
    }
  }
}

// project() (whatever SIMD path it takes) against the library's definition written plainly:
// per (activation row, weight row) acc = 0.0f, then fold_slice<F> over the subs in order.
TEST(CpuTile, ProjectEqualsTheScalarFoldBitwiseForEveryInt8Format) {
  const uint64_t seed = test::fresh_seed("tile_project");
  for (const FormatInfo& info : block_formats()) {
    if (!info.int8 || !synth::synth_supports(info.type)) continue;
    SCOPED_TRACE(std::string(info.name) + " seed " + std::to_string(seed));
    visit_format(info.type, [&](auto tag) {
      using F = typename decltype(tag)::Format;
      if constexpr (F::kInt8) {
        const int64_t in = 512, rows = 5, n_rows_x = 13;
        const auto bytes = synth::random_expert_tensor(F::kType, in, rows, 1, 0.1, seed);
        const ExpertTensor t = make_expert_tensor("t", F::kType, bytes.data(), in, rows, 1);
        const std::vector<float> x = synth::random_activations(n_rows_x, in, seed + 1);
        QuantizedRows xq;
        quantize_rows(x.data(), n_rows_x, in, xq, 1);
        const cpu::ActivationView view{xq.codes.data(), xq.scales.data(), xq.half_sums.data(), in};
        const std::vector<int32_t> act_rows = {12, 0, 5,  5, 7, 1,
                                               3,  9, 11, 2, 4};  // 11: not a multiple of 8
        const cpu::FormatOps ops = cpu::format_ops(F::kType, "t");
        cpu::DecodedRows tile;
        ops.decode_rows(t, 0, 0, rows, tile);
        const int64_t stride = rows + 3;
        std::vector<float> got(act_rows.size() * stride, NAN);
        ops.project(tile, view, act_rows.data(), static_cast<int>(act_rows.size()), got.data(),
                    stride);
        int64_t diffs = 0;
        for (size_t i = 0; i < act_rows.size(); ++i)
          for (int64_t r = 0; r < rows; ++r) {
            float acc = 0.0f;
            for (int64_t s = 0; s < in / 32; ++s) {
              int8_t q[32];
              SubScale sc;
              F::decode_sub(t.row(0, r) + (s * 32 / F::kBlockValues) * F::kBlockBytes,
                            static_cast<int>(s % (F::kBlockValues / 32)), q, sc);
              const int8_t* a = xq.codes.data() + act_rows[i] * in + s * 32;
              int32_t isum[2] = {0, 0};
              for (int k = 0; k < 32; ++k) isum[k / 16] += int32_t{q[k]} * a[k];
              acc = fold_slice<F>(acc, isum, xq.half_sums.data() + act_rows[i] * (in / 16) + 2 * s,
                                  sc, xq.scales[act_rows[i] * (in / 32) + s]);
            }
            diffs += std::memcmp(&acc, &got[i * stride + r], sizeof acc) != 0;
          }
        EXPECT_EQ(diffs, 0);
      }
    });
  }
}

}  // namespace
}  // namespace strata
