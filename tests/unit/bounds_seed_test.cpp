// The test harness itself: the bounds table covers every format each profile carries, at every
// stage, and agrees with the bench's check; the seeds of random cases are a function of the run's
// seed, the test and the salt (STRATA_TEST_SEED replays them: tests/CMakeLists.txt runs this
// file twice with one seed and compares the seeds printed).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>

#include "bench/protocol.hpp"
#include "bounds.hpp"
#include "formats/registry.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

using test::Stage;

TEST(BoundsTable, EveryCarriedFormatHasABoundAtEveryStage) {
  for (const FormatInfo& f : block_formats()) {
    for (Numerics profile : {Numerics::kQ8, Numerics::kQ10}) {
      if (!(profile == Numerics::kQ10 ? f.wide : f.int8)) continue;
      for (Stage stage : {Stage::kGate, Stage::kUp, Stage::kH, Stage::kDown, Stage::kY}) {
        const auto b = test::find_bounds(profile, f.type, stage);
        ASSERT_TRUE(b.has_value()) << test::bounds_key(profile, f.type, stage);
        EXPECT_GT(b->same_quant_rel_rms, 0.0) << test::bounds_key(profile, f.type, stage);
        EXPECT_GE(b->same_quant_worst_row, b->same_quant_rel_rms) << test::bounds_key(profile, f.type, stage);
      }
    }
  }
}

TEST(BoundsTable, OneRowPerKeyAndTheFormatRowWins) {
  for (size_t i = 0; i < std::size(test::kBoundTable); ++i)
    for (size_t j = i + 1; j < std::size(test::kBoundTable); ++j) {
      const test::BoundRow& a = test::kBoundTable[i];
      const test::BoundRow& b = test::kBoundTable[j];
      EXPECT_FALSE(a.profile == b.profile && a.format == b.format && a.stage == b.stage)
          << "rows " << i << " and " << j << " share a key";
    }
  // The bundled layers' q10 exact bound is Q2_0's own row; another down format has none.
  EXPECT_EQ(test::find_bounds(Numerics::kQ10, GgmlType::Q2_0, Stage::kY)->exact_rel_rms, 7e-3);
  EXPECT_EQ(test::find_bounds(Numerics::kQ10, GgmlType::Q8_0, Stage::kY)->exact_rel_rms, test::kNoBound);
}

// The bench's agreement check (src/bench/protocol.hpp) bounds a whole layer with the same values.
TEST(BoundsTable, BenchCheckUsesTheLayerBounds) {
  for (Numerics profile : {Numerics::kQ8, Numerics::kQ10}) {
    const test::StageBounds y = test::bounds_for(profile, GgmlType::Q2_0, Stage::kY);
    EXPECT_EQ(bench::kSameQuantRelRms, y.same_quant_rel_rms);
    EXPECT_EQ(bench::kSameQuantWorstRow, y.same_quant_worst_row);
  }
}

TEST(SeedReplay, SeedsDifferPerDrawAndSalt) {
  const uint64_t a = test::fresh_seed("salt");
  const uint64_t b = test::fresh_seed("salt");
  const uint64_t c = test::fresh_seed("other");
  const uint64_t s = test::shared_seed("salt");
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(b, c);
  EXPECT_NE(s, a);
  EXPECT_EQ(s, test::shared_seed("salt"));
  const char* given = std::getenv("STRATA_TEST_SEED");
  if (given != nullptr) {
    EXPECT_EQ(test::run_seed(), std::strtoull(given, nullptr, 0));
  }
  // Printed for the replay check: the same STRATA_TEST_SEED must print the same line.
  std::printf("seeds: run %llu draws %llu %llu %llu shared %llu\n",
              static_cast<unsigned long long>(test::run_seed()), static_cast<unsigned long long>(a),
              static_cast<unsigned long long>(b), static_cast<unsigned long long>(c),
              static_cast<unsigned long long>(s));
}

// Its first draw is the same whether it runs alone or after the others (the replay check runs
// it both ways and compares).
TEST(SeedReplay, FirstDrawIsIndependentOfEarlierTests) {
  std::printf("seeds: first draw %llu\n", static_cast<unsigned long long>(test::fresh_seed("salt")));
}

// A failing random case prints its replay line. Fails on purpose, so it runs only when the
// replay check asks for it (STRATA_TEST_REPLAY_DEMO=1) and skips otherwise.
TEST(SeedReplay, FailurePrintsTheReplayLine) {
  if (std::getenv("STRATA_TEST_REPLAY_DEMO") == nullptr) GTEST_SKIP() << "run by the replay check only";
  (void)test::fresh_seed("demo");
  ADD_FAILURE() << "deliberate failure of a random case";
}

}  // namespace
}  // namespace strata
