// The exactness claim of the q10 profile on the hardware: every fp16 MMA primitive the q10 kernels
// use (mma.sync m16n8k16, nvcuda::wmma 16x16x16, wgmma m64nNk16 for N = 64, 128, 256 with A from
// registers and from shared memory) returns the exact integer span dot when |a| <= 511, |w| <= W_f
// and the span restarts the accumulator -- for the (S, W_f) of every registered wide format and for
// the envelope of each span width (the largest W with S * 511 * W < 2^24). Operand patterns aim at
// the edges: all-maximum same-sign products (the largest partial sums), big products mixed with
// +-1 (alignment truncation), alternating cancellation, and random codes. 0 mismatches against
// int64 sums. Skips without a device; the wgmma cases skip without an sm_90 device and a 90a image.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "f16_mma_probe.hpp"
#include "formats/registry.hpp"
#include "gpu_test_util.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

constexpr int kK = 128;  // 2, 4 or 8 spans: each must restart from the previous span's value
constexpr int kMaxCode = 511;

struct SpanBound {
  int span;        // S
  int max_weight;  // W
  std::string what;
};

// Every distinct (S, W_f) of the registry, then each span width's envelope.
std::vector<SpanBound> span_bounds() {
  std::vector<SpanBound> bounds;
  std::set<std::pair<int, int>> seen;
  for (const FormatInfo& info : block_formats()) {
    if (!info.wide) continue;
    std::string name(info.name);
    if (seen.insert({info.wide_span, info.wide_max}).second) {
      bounds.push_back({info.wide_span, info.wide_max, name});
    } else {
      for (auto& b : bounds)
        if (b.span == info.wide_span && b.max_weight == info.wide_max) b.what += "," + name;
    }
  }
  for (int span : {16, 32, 64})
    bounds.push_back({span, test::f16_probe_max_weight(span), "envelope"});
  return bounds;
}

int uniform_int(synth::Rng& rng, int lo, int hi) {  // [lo, hi]
  return lo + static_cast<int>(rng.uniform() * (hi - lo + 1));
}

// a: [M, K] weights, b: [N, K] codes, for pattern `p`.
enum class Pattern {
  kAllMaxPositive,
  kAllMaxNegative,
  kBigTiny,
  kTinyBig,
  kAlternating,
  kRandom,
  kRandomExtreme
};
constexpr Pattern kPatterns[] = {
    Pattern::kAllMaxPositive, Pattern::kAllMaxNegative, Pattern::kBigTiny,      Pattern::kTinyBig,
    Pattern::kAlternating,    Pattern::kRandom,         Pattern::kRandomExtreme};
const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::kAllMaxPositive:
      return "all_max_positive";
    case Pattern::kAllMaxNegative:
      return "all_max_negative";
    case Pattern::kBigTiny:
      return "big_then_tiny";
    case Pattern::kTinyBig:
      return "tiny_then_big";
    case Pattern::kAlternating:
      return "alternating_cancellation";
    case Pattern::kRandom:
      return "random";
    case Pattern::kRandomExtreme:
      return "random_extremes";
  }
  return "?";
}

void fill(Pattern p, int w_max, int m, int n, synth::Rng& rng, std::vector<int16_t>& a,
          std::vector<int16_t>& b) {
  a.assign(static_cast<size_t>(m) * kK, 0);
  b.assign(static_cast<size_t>(n) * kK, 0);
  auto set = [&](std::vector<int16_t>& v, int rows, auto value) {
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < kK; ++k)
        v[static_cast<size_t>(r) * kK + k] = static_cast<int16_t>(value(r, k));
  };
  auto sign = [](bool negative) { return negative ? -1 : 1; };
  switch (p) {
    case Pattern::kAllMaxPositive:
      set(a, m, [&](int, int) { return w_max; });
      set(b, n, [&](int, int) { return kMaxCode; });
      break;
    case Pattern::kAllMaxNegative:  // every product -511 * W; half the rows flip both signs (+)
      set(a, m, [&](int r, int) { return sign(r % 2 == 1) * w_max; });
      set(b, n, [&](int, int) { return -kMaxCode; });
      break;
    case Pattern::kBigTiny:  // one maximal product, then three +-1 products, per group of four k
    case Pattern::kTinyBig: {
      const int big_k = p == Pattern::kBigTiny ? 0 : 3;
      set(a, m, [&](int r, int k) {
        return k % 4 == big_k ? sign(r % 3 == 0) * w_max : sign((r + k) % 2 == 1);
      });
      set(b, n,
          [&](int c, int k) { return k % 4 == big_k ? kMaxCode : sign((3 * c + k) % 3 == 0); });
      break;
    }
    case Pattern::kAlternating: {  // +-max with odd residues: partial sums swing near the bound
      const int spread = std::min(5, w_max + 1);
      set(a, m, [&](int r, int k) { return w_max - (r + 2 * k) % spread; });
      set(b, n, [&](int c, int k) {
        return (k % 2 ? -kMaxCode : kMaxCode) + (k % 2 ? 1 : -1) * ((c + k) % 3);
      });
      break;
    }
    case Pattern::kRandom:
      set(a, m, [&](int, int) { return uniform_int(rng, -w_max, w_max); });
      set(b, n, [&](int, int) { return uniform_int(rng, -kMaxCode, kMaxCode); });
      break;
    case Pattern::kRandomExtreme: {  // each operand +-max, +-1 or 0
      auto pick = [&](int top) {
        const int choice = uniform_int(rng, 0, 4);
        return choice < 2 ? sign(choice == 1) * top : choice - 3;
      };
      set(a, m, [&](int, int) { return pick(w_max); });
      set(b, n, [&](int, int) { return pick(kMaxCode); });
      break;
    }
  }
}

class F16MmaExact : public ::testing::TestWithParam<test::F16Mma> {};

TEST_P(F16MmaExact, SpanDotsEqualInt64SumsAtTheBound) {
  STRATA_REQUIRE_GPU();
  const test::F16Mma op = GetParam();
  const test::F16MmaInfo info = test::f16_mma_info(op);
  if (!test::f16_mma_available(op))
    GTEST_SKIP() << info.name << ": no sm_90 device or no 90a image";
  const uint64_t seed = test::fresh_seed(std::string("f16_mma_exact/") + info.name);
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  const int m = info.m, n = info.n;

  const auto bounds = span_bounds();
  ASSERT_GT(bounds.size(), 3u) << "the registry lists wide formats";

  int64_t compared = 0, wrong = 0;
  int64_t largest_partial = 0;
  for (const SpanBound& bound : bounds) {
    ASSERT_LE(static_cast<int64_t>(bound.span) * kMaxCode * bound.max_weight,
              (int64_t{1} << 24) - 1)
        << bound.what;
    ASSERT_LE(bound.max_weight, test::f16_probe_max_weight(bound.span)) << bound.what;
    for (Pattern p : kPatterns) {
      SCOPED_TRACE(std::string(info.name) + " S=" + std::to_string(bound.span) + " W=" +
                   std::to_string(bound.max_weight) + " (" + bound.what + ") " + pattern_name(p));
      std::vector<int16_t> a, b;
      fill(p, bound.max_weight, m, n, rng, a, b);
      for (int16_t v : a) ASSERT_LE(std::abs(int{v}), bound.max_weight);
      for (int16_t v : b) ASSERT_LE(std::abs(int{v}), kMaxCode);
      const int spans = kK / bound.span;
      const size_t out_count = static_cast<size_t>(spans) * m * n;
      const auto da = test::to_device(a), db = test::to_device(b);
      cuda::DeviceBuffer<float> dd(out_count);
      test::poison_device(dd.get(), out_count);
      test::launch_f16_span_probe(op, bound.span, da.get(), db.get(), kK, dd.get(), nullptr);
      STRATA_CUDA_CHECK(cudaDeviceSynchronize());
      const auto d = test::to_host(dd.get(), out_count);
      int64_t case_wrong = 0;
      std::string first;
      for (int s = 0; s < spans; ++s)
        for (int r = 0; r < m; ++r)
          for (int c = 0; c < n; ++c) {
            int64_t sum = 0;
            for (int k = s * bound.span; k < (s + 1) * bound.span; ++k) {
              sum += int64_t{a[static_cast<size_t>(r) * kK + k]} *
                     int64_t{b[static_cast<size_t>(c) * kK + k]};
              largest_partial = std::max<int64_t>(largest_partial, sum < 0 ? -sum : sum);
            }
            const float got = d[(static_cast<size_t>(s) * m + r) * n + c];
            ++compared;
            if (static_cast<double>(got) != static_cast<double>(sum)) {
              if (case_wrong++ == 0)
                first = "span " + std::to_string(s) + " (" + std::to_string(r) + ", " +
                        std::to_string(c) + "): got " + std::to_string(got) + " want " +
                        std::to_string(sum);
            }
          }
      wrong += case_wrong;
      EXPECT_EQ(case_wrong, 0) << "first: " << first;
    }
  }
  EXPECT_EQ(wrong, 0) << "of " << compared << " span dots";
  // The cases reach the bound: the envelope's all-maximum span is within one span of 2^24.
  EXPECT_GE(largest_partial, int64_t{16'000'000});
  EXPECT_LT(largest_partial, int64_t{1} << 24);
}

INSTANTIATE_TEST_SUITE_P(Primitives, F16MmaExact,
                         ::testing::Values(test::F16Mma::kMmaSyncM16N8K16,
                                           test::F16Mma::kWmma16x16x16, test::F16Mma::kWgmmaRsN64,
                                           test::F16Mma::kWgmmaRsN128, test::F16Mma::kWgmmaRsN256,
                                           test::F16Mma::kWgmmaSsN64, test::F16Mma::kWgmmaSsN128,
                                           test::F16Mma::kWgmmaSsN256),
                         [](const auto& info) {
                           return std::string(test::f16_mma_info(info.param).name);
                         });

}  // namespace
}  // namespace strata
