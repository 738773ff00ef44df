// The bench harness's logic on synthetic timings: statistics, paired ratios, the A/A band, the
// verdict rule, the A B ... A protocol, the agreement check, and the JSON/table it reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "bench/cell.hpp"
#include "bench/json.hpp"
#include "bench/protocol.hpp"
#include "bench/report.hpp"
#include "bench/stats.hpp"
#include "common/error.hpp"
#include "cpu/moe_cpu.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata::bench {
namespace {

// ---- statistics -----------------------------------------------------------------------------

TEST(BenchStats, QuantilesInterpolateBetweenOrderStatistics) {
  // Type 7: position q * (n - 1) in the sorted sample.
  const std::vector<double> v = {4.0, 1.0, 3.0, 2.0};
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile(v, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(median({7.0, 1.0, 5.0}), 5.0);
  EXPECT_THROW(quantile({}, 0.5), Error);
  EXPECT_THROW(quantile(v, 1.5), Error);
}

TEST(BenchStats, SummaryOfARandomSampleBracketsItsMedian) {
  const uint64_t seed = test::fresh_seed("summary");
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(0.0, 0.3);
  std::vector<double> v(501);
  for (double& x : v) x = dist(rng);
  const Summary s = summarize(v);
  EXPECT_EQ(s.n, 501);
  // With an odd count the median is an element with as many below it as above it.
  EXPECT_EQ(std::count_if(v.begin(), v.end(), [&](double x) { return x < s.median; }), 250);
  EXPECT_EQ(std::count_if(v.begin(), v.end(), [&](double x) { return x > s.median; }), 250);
  EXPECT_LE(s.min, s.q1);
  EXPECT_LE(s.q1, s.median);
  EXPECT_LE(s.median, s.q3);
  EXPECT_LE(s.q3, s.max);
  EXPECT_DOUBLE_EQ(s.iqr(), s.q3 - s.q1);
  EXPECT_EQ(summarize({}).n, 0);
}

// A drift that multiplies every slot's time by g cancels in the bracketed B/A ratio.
TEST(BenchStats, BracketedRatioCancelsGeometricDrift) {
  const double base = 250.0, g = 1.03, r = 0.8;
  const int cells = 4, units = 3;
  std::vector<RunTimes> a_runs, b_runs;
  for (int slot = 0; slot < 2 * cells + 1; ++slot) {
    RunTimes run;
    for (int u = 0; u < units; ++u)
      run.push_back((base + 10 * u) * std::pow(g, slot) * (slot % 2 ? r : 1.0));
    (slot % 2 ? b_runs : a_runs).push_back(run);
  }
  const PairedRatios p = paired_ratios(a_runs, b_runs);
  ASSERT_EQ(p.b_over_a.size(), static_cast<size_t>(cells * units));
  ASSERT_EQ(p.a_over_a.size(), static_cast<size_t>(cells * units));
  ASSERT_EQ(p.cell_b_over_a.size(), static_cast<size_t>(cells));
  for (double x : p.b_over_a) EXPECT_NEAR(x, r, 1e-12);
  for (double x : p.cell_b_over_a) EXPECT_NEAR(x, r, 1e-12);
  // A/A sees two slots of drift, scaled by sqrt(3/4) in the exponent.
  for (double x : p.a_over_a) EXPECT_NEAR(x, std::pow(g * g, kAaExponent), 1e-12);
}

TEST(BenchStats, PairedRatiosRejectMalformedRuns) {
  const RunTimes ok = {1.0, 2.0};
  EXPECT_THROW(paired_ratios({ok}, {ok}), Error);              // A needs N + 1 runs
  EXPECT_THROW(paired_ratios({ok, ok}, {}), Error);            // no B
  EXPECT_THROW(paired_ratios({ok, {1.0}}, {ok}), Error);       // unit counts differ
  EXPECT_THROW(paired_ratios({ok, ok}, {{1.0, 0.0}}), Error);  // a zero time
  EXPECT_THROW(paired_ratios({ok, ok}, {{1.0, NAN}}), Error);  // not a number
  EXPECT_NO_THROW(paired_ratios({ok, ok}, {ok}));
}

TEST(BenchStats, NoiseBandIsTheAaIqrNeverNarrowerThanTheMinimum) {
  const Band quiet = noise_band({1.0, 1.0, 1.0, 1.0});
  EXPECT_DOUBLE_EQ(quiet.lo, 1.0 - kMinBandHalfWidth);
  EXPECT_DOUBLE_EQ(quiet.hi, 1.0 + kMinBandHalfWidth);
  const Band noisy = noise_band({0.90, 0.95, 1.05, 1.10, 1.00});
  EXPECT_DOUBLE_EQ(noisy.lo, 0.95);
  EXPECT_DOUBLE_EQ(noisy.hi, 1.05);
  EXPECT_NEAR(noisy.width(), 0.10, 1e-12);
}

// ---- the verdict rule at its edges ------------------------------------------------------

Summary ratio_at(double m) {
  Summary s;
  s.median = s.q1 = s.q3 = s.min = s.max = m;
  s.n = 10;
  return s;
}

TEST(BenchVerdict, RuleAtTheBandEdges) {
  Band band;
  band.lo = 0.98;
  band.hi = 1.02;  // width 0.04: PROMOTE below 0.94
  EXPECT_EQ(decide(true, ratio_at(0.90), band).verdict, Verdict::kPromote);
  EXPECT_EQ(decide(true, ratio_at(0.9399), band).verdict, Verdict::kPromote);
  EXPECT_EQ(decide(true, ratio_at(0.9401), band).verdict,
            Verdict::kRejectParity);  // faster, not by a width
  EXPECT_EQ(decide(true, ratio_at(0.97), band).verdict, Verdict::kRejectParity);
  EXPECT_EQ(decide(true, ratio_at(1.00), band).verdict, Verdict::kRejectParity);
  EXPECT_EQ(decide(true, ratio_at(1.02), band).verdict, Verdict::kRejectParity);
  EXPECT_EQ(decide(true, ratio_at(1.0201), band).verdict, Verdict::kRejectSlower);
  // Disagreeing arms are never promoted, however fast B is.
  EXPECT_EQ(decide(false, ratio_at(0.10), band).verdict, Verdict::kWrong);
  EXPECT_EQ(decide(true, Summary{}, band).verdict, Verdict::kWrong);  // nothing timed
  EXPECT_EQ(verdict_name(Verdict::kPromote), "PROMOTE");
  EXPECT_EQ(verdict_name(Verdict::kRejectParity), "REJECT-at-parity");
  EXPECT_EQ(verdict_name(Verdict::kRejectSlower), "REJECT-slower");
  EXPECT_EQ(verdict_name(Verdict::kWrong), "WRONG");
}

// ---- the protocol on a fake runner ----------------------------------------------------------

// Times drawn from a lognormal around a per-unit base; B is `speed` times A. Records the calls.
class FakeRunner final : public Runner {
 public:
  FakeRunner(int n_layers, int n_chunks, double speed, double noise, uint64_t seed)
      : speed_(speed), noise_(0.0, noise), rng_(seed) {
    for (int c = 0; c < n_chunks; ++c)
      for (int l = 0; l < n_layers; ++l) {
        Unit u;
        u.layer = l;
        u.chunk = c;
        u.tokens = 64;
        u.ops = layer_ops(u.tokens, 4, 256, 128);
        u.weight_bytes = 1e6 * (l + 1);
        units_.push_back(u);
      }
  }
  const std::vector<Unit>& units() const override { return units_; }
  UnitTime run(int slot, size_t unit) override {
    calls.emplace_back(slot, unit);
    UnitTime t;
    t.total_us =
        (100.0 + 20.0 * units_[unit].layer) * (slot == 1 ? speed_ : 1.0) * std::exp(noise_(rng_));
    t.has_phases = true;
    for (int p = 0; p < kPhaseCount; ++p) t.phase_us[p] = t.total_us / kPhaseCount;
    return t;
  }
  std::vector<std::pair<int, size_t>> calls;

 private:
  std::vector<Unit> units_;
  double speed_;
  std::normal_distribution<double> noise_;
  std::mt19937_64 rng_;
};

CellSpec fake_cell(int cells) {
  CellSpec c;
  c.d = 256;
  c.f = 128;
  c.n_expert = 8;
  c.k = 4;
  c.layers = 3;
  c.tokens = 128;
  c.chunk = 64;
  c.cells = cells;
  c.arms = parse_arms("production,fused");
  return c;
}

AgreementCheck passed_check() {
  AgreementCheck c;
  c.passed = true;
  c.message = "synthetic";
  return c;
}

TEST(BenchProtocol, WarmsUpThenAlternatesABAndClosesWithA) {
  FakeRunner runner(3, 2, 1.0, 0.0, 1);
  ProtocolOptions options;
  options.cells = 2;
  options.warmup_units = 2;
  int64_t last_done = 0, last_total = 0;
  const Measurements m = run_protocol(runner, options, [&](int64_t done, int64_t total) {
    EXPECT_EQ(done, last_done + 1);
    last_done = done;
    last_total = total;
  });
  const size_t n = runner.units().size();
  ASSERT_EQ(m.a_runs.size(), 3u);
  ASSERT_EQ(m.b_runs.size(), 2u);
  for (const auto& run : m.a_runs) EXPECT_EQ(run.size(), n);
  // Warm-up: units 0 and 1 on both arms; then A(all) B(all) A(all) B(all) A(all).
  ASSERT_EQ(runner.calls.size(), 4 + 5 * n);
  EXPECT_EQ(last_done, static_cast<int64_t>(runner.calls.size()));
  EXPECT_EQ(last_total, last_done);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(runner.calls[i].second, i / 2);
  for (size_t run = 0; run < 5; ++run)
    for (size_t u = 0; u < n; ++u) {
      const auto& call = runner.calls[4 + run * n + u];
      EXPECT_EQ(call.first, static_cast<int>(run % 2)) << "run " << run;
      EXPECT_EQ(call.second, u);
    }
}

struct VerdictCase {
  const char* name;
  double speed;
  bool agree;
  Verdict expected;
};

void PrintTo(const VerdictCase& c, std::ostream* os) {
  *os << c.name << " (B = " << c.speed << " x A)";
}

class BenchVerdictOnFakeTimings : public ::testing::TestWithParam<VerdictCase> {};

TEST_P(BenchVerdictOnFakeTimings, GivesTheExpectedVerdict) {
  const VerdictCase& c = GetParam();
  const uint64_t seed = test::fresh_seed(c.name);
  SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed));
  // 1% per-unit noise over 3 layers x 20 chunks x 3 cells: the band is about +-1%.
  FakeRunner runner(3, 20, c.speed, 0.01, seed);
  ProtocolOptions options;
  options.cells = 3;
  const Measurements m = run_protocol(runner, options);
  AgreementCheck check = passed_check();
  check.passed = c.agree;
  const RunResult r = analyse(fake_cell(3), runner.units(), m, check);
  EXPECT_EQ(r.decision.verdict, c.expected) << r.decision.reason;
  EXPECT_NEAR(r.b_over_a.median, c.speed, 0.01);
  EXPECT_NEAR(r.a_over_a.median, 1.0, 0.01);
  EXPECT_LT(r.band.width(), 0.05);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BenchVerdictOnFakeTimings,
    ::testing::Values(VerdictCase{"promote", 0.80, true, Verdict::kPromote},
                      VerdictCase{"parity", 1.00, true, Verdict::kRejectParity},
                      VerdictCase{"slower", 1.20, true, Verdict::kRejectSlower},
                      VerdictCase{"wrong", 0.50, false, Verdict::kWrong}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(BenchProtocol, AnalyseReportsThroughputFromTheMedianCell) {
  FakeRunner runner(2, 3, 0.5, 0.0, 1);  // noise-free: every run of an arm takes the same time
  ProtocolOptions options;
  options.cells = 2;
  const Measurements m = run_protocol(runner, options);
  const RunResult r = analyse(fake_cell(2), runner.units(), m, passed_check());
  double ops = 0, bytes = 0, a_cell_us = 0;
  for (const Unit& u : runner.units()) {
    ops += u.ops;
    bytes += u.weight_bytes;
    a_cell_us += 100.0 + 20.0 * u.layer;
  }
  EXPECT_DOUBLE_EQ(r.cell_ops, ops);
  EXPECT_DOUBLE_EQ(r.cell_weight_bytes, bytes);
  EXPECT_NEAR(r.arms[0].median_cell_ms, a_cell_us * 1e-3, 1e-9);
  EXPECT_NEAR(r.arms[1].median_cell_ms, 0.5 * a_cell_us * 1e-3, 1e-9);
  EXPECT_NEAR(r.arms[0].ops_per_s, ops / (a_cell_us * 1e-6), 1e-6 * ops / (a_cell_us * 1e-6));
  EXPECT_NEAR(r.arms[1].weight_bytes_per_s, bytes / (0.5 * a_cell_us * 1e-6), 1.0);
  ASSERT_EQ(r.arms[0].layer_us.size(), 2u);
  EXPECT_NEAR(r.arms[0].layer_us[0], 100.0, 1e-9);
  EXPECT_NEAR(r.arms[0].layer_us[1], 120.0, 1e-9);
  EXPECT_TRUE(r.arms[0].has_phases);
  EXPECT_NEAR(r.arms[1].phase_us[2].median, r.arms[1].unit_us.median / kPhaseCount, 1e-9);
  EXPECT_EQ(r.arms[0].cell_ms.size(), 3u);
  EXPECT_EQ(r.arms[1].cell_ms.size(), 2u);
  EXPECT_EQ(r.decision.verdict, Verdict::kPromote);
}

TEST(BenchProtocol, FailedCheckIsWrongEvenWithoutTimings) {
  AgreementCheck failed;
  failed.message = "bits differ";
  FakeRunner runner(1, 1, 0.5, 0.0, 1);
  const RunResult r = analyse(fake_cell(1), runner.units(), Measurements{}, failed);
  EXPECT_EQ(r.decision.verdict, Verdict::kWrong);
  EXPECT_EQ(r.arms[0].unit_us.n, 0);
}

// ---- cells ------------------------------------------------------------------------------

TEST(BenchCell, PresetsAreGpuMdCells) {
  const Preset* p = find_preset("qwen35-a3b");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->d, 2048);
  EXPECT_EQ(p->f, 512);
  EXPECT_EQ(p->n_expert, 256);
  EXPECT_EQ(p->k, 8);
  EXPECT_EQ(p->layers, 40);
  ASSERT_NE(find_preset("flash-next"), nullptr);
  EXPECT_EQ(find_preset("flash-next")->k, 10);
  EXPECT_EQ(find_preset("gpt-oss-120b")->d, 2880);
  EXPECT_EQ(find_preset("nonesuch"), nullptr);
  EXPECT_EQ(presets().size(), 4u);
}

TEST(BenchCell, GeometryTheFormatsCannotTileIsRefusedNamingBoth) {
  try {
    check_geometry("gpt-oss-120b", 2880, 2880, GgmlType::IQ3_S, GgmlType::Q2_0);
    FAIL() << "d = 2880 with iq3_s was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("gpt-oss-120b"), std::string::npos) << msg;
    EXPECT_NE(msg.find("2880"), std::string::npos) << msg;
    EXPECT_NE(msg.find("iq3_s"), std::string::npos) << msg;
  }
  try {
    check_geometry("custom", 2048, 96, GgmlType::IQ3_S,
                   GgmlType::Q2_0);  // f = 96: no whole q2_0 block row
    FAIL() << "f = 96 with q2_0 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q2_0"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_geometry("gpt-oss-120b", 2880, 2880, GgmlType::MXFP4, GgmlType::MXFP4));
  EXPECT_NO_THROW(check_geometry("qwen35-a3b", 2048, 512, GgmlType::IQ3_S, GgmlType::Q2_0));
}

TEST(BenchCell, ArmsParseAsExactlyTwoKnownNames) {
  const auto arms = parse_arms("fused, production");
  ASSERT_EQ(arms.size(), 2u);
  EXPECT_EQ(arms[0].name, "fused");
  EXPECT_EQ(arms[0].arm, Arm::kFused);
  EXPECT_EQ(arms[1].arm, Arm::kProduction);
  EXPECT_THROW(parse_arms("production"), Error);
  EXPECT_THROW(parse_arms("production,fused,fused"), Error);
  EXPECT_THROW(parse_arms("production,wmma"), Error);
  const auto sm80 = parse_arms("fused,fused-sm80");
  EXPECT_EQ(sm80[0].arm, Arm::kFused);
  EXPECT_EQ(sm80[1].arm, Arm::kFusedSm80);
  const auto named = parse_arms("fused-hopper,fused-wmma");
  EXPECT_EQ(named[0].arm, Arm::kFusedHopper);
  EXPECT_EQ(named[1].arm, Arm::kFusedWmma);
  EXPECT_TRUE(arms_claim_bitwise(Arm::kProduction, Arm::kFused));
  EXPECT_TRUE(arms_claim_bitwise(Arm::kFusedWmma, Arm::kFusedHopper));
  EXPECT_DOUBLE_EQ(layer_ops(4096, 8, 2048, 512), 2.0 * 4096 * 8 * 3 * 2048 * 512);
}

// ---- the agreement check on real CPU arms -----------------------------------------------------

struct SmallCase {
  synth::SyntheticLayer layer;
  synth::Routing routing;
  std::vector<float> x;
  LayerInputs in;
  std::vector<float> y_a, y_b;
};

SmallCase small_case(uint64_t seed) {
  SmallCase c;
  synth::LayerSpec spec;
  spec.d = 256;
  spec.f = 128;
  spec.n_expert = 8;
  spec.seed = seed;
  c.layer = synth::make_layer(spec);
  const int64_t T = 24;
  c.routing = synth::skewed_routing(T, spec.n_expert, 3, seed + 1);
  c.x = synth::random_activations(T, spec.d, seed + 2);
  c.in = LayerInputs{c.x.data(), c.routing.ids.data(), c.routing.weights.data(), T, 3};
  c.y_a.resize(static_cast<size_t>(T * spec.d));
  c.y_b.resize(c.y_a.size());
  run_layer_cpu(c.layer.weights, c.in, Arm::kProduction, 2, c.y_a.data());
  run_layer_cpu(c.layer.weights, c.in, Arm::kFused, 2, c.y_b.data());
  return c;
}

TEST(BenchCheck, AgreeingArmsPassAndOneFlippedBitFails) {
  const uint64_t seed = test::fresh_seed("agreement");
  SCOPED_TRACE("seed " + std::to_string(seed));
  SmallCase c = small_case(seed);
  const AgreementCheck ok =
      check_agreement(c.layer.weights, c.in, c.y_a.data(), c.y_b.data(), true, 8, 2);
  EXPECT_TRUE(ok.passed) << ok.message;
  EXPECT_EQ(ok.bitwise_diffs, 0);
  EXPECT_EQ(ok.oracle_tokens, 8);
  EXPECT_LE(ok.oracle[0].rel_rms, kSameQuantRelRms);

  // One ulp in the last token (outside the oracle's subset): only the bitwise claim catches it.
  uint32_t bits;
  std::memcpy(&bits, &c.y_b.back(), 4);
  bits ^= 1u;
  std::memcpy(&c.y_b.back(), &bits, 4);
  const AgreementCheck flipped =
      check_agreement(c.layer.weights, c.in, c.y_a.data(), c.y_b.data(), true, 8, 2);
  EXPECT_FALSE(flipped.passed);
  EXPECT_EQ(flipped.bitwise_diffs, 1);
  EXPECT_NE(flipped.message.find("bitwise"), std::string::npos) << flipped.message;
  // Without a bitwise claim the oracle bounds alone decide, and one ulp is within them.
  EXPECT_TRUE(
      check_agreement(c.layer.weights, c.in, c.y_a.data(), c.y_b.data(), false, 8, 2).passed);
}

TEST(BenchCheck, AnArmOffTheOracleFailsEvenWithoutABitwiseClaim) {
  const uint64_t seed = test::fresh_seed("oracle");
  SCOPED_TRACE("seed " + std::to_string(seed));
  SmallCase c = small_case(seed);
  const int64_t d = c.layer.weights.d;
  for (int64_t j = 0; j < d; ++j)
    c.y_b[static_cast<size_t>(2 * d + j)] *= 1.01f;  // token 2, 1% off
  const AgreementCheck off =
      check_agreement(c.layer.weights, c.in, c.y_a.data(), c.y_b.data(), false, 8, 2);
  EXPECT_FALSE(off.passed);
  EXPECT_GT(off.oracle[1].worst_row, kSameQuantWorstRow);
  EXPECT_LE(off.oracle[0].worst_row, kSameQuantWorstRow);
  c.y_a[5] = NAN;
  EXPECT_FALSE(
      check_agreement(c.layer.weights, c.in, c.y_a.data(), c.y_a.data(), false, 8, 2).passed);
}

// ---- what the reports contain ----------------------------------------------------------------

TEST(BenchReport, JsonAndTableCarryTheRun) {
  const uint64_t seed = test::fresh_seed("report");
  FakeRunner runner(2, 4, 0.7, 0.01, seed);
  ProtocolOptions options;
  options.cells = 2;
  const RunResult r =
      analyse(fake_cell(2), runner.units(), run_protocol(runner, options), passed_check());
  RunContext ctx;
  ctx.backend = "cuda";
  ctx.device = "NVIDIA H200";
  ctx.command = "strata-moe bench --backend cuda";
  ctx.date = utc_now_iso8601();
  ctx.ceiling_tops = ceiling_tops_for(ctx.device);
  EXPECT_DOUBLE_EQ(ctx.ceiling_tops, kH200MmaSyncTops);
  EXPECT_EQ(ceiling_tops_for("NVIDIA A100"), 0.0);

  const nlohmann::json doc = nlohmann::json::parse(document_json(ctx, {r}).dump());
  EXPECT_EQ(doc["schema"], kJsonSchema);
  EXPECT_TRUE(doc["git_commit"].is_null());
  ASSERT_EQ(doc["runs"].size(), 1u);
  const auto& run = doc["runs"][0];
  EXPECT_EQ(run["verdict"], "PROMOTE");
  EXPECT_EQ(run["cell"]["T"], 64);
  ASSERT_EQ(run["results"].size(), 2u);
  EXPECT_EQ(run["results"][1]["arm"], "fused");
  EXPECT_NEAR(run["results"][0]["tops"].get<double>(), r.arms[0].ops_per_s / 1e12, 1e-12);
  EXPECT_NEAR(run["results"][0]["ceiling_fraction"].get<double>(),
              r.arms[0].ops_per_s / 1e12 / kH200MmaSyncTops, 1e-15);
  EXPECT_TRUE(run["results"][0]["phases_us"].contains("gate_up"));
  EXPECT_NEAR(run["ratio"]["b_over_a"]["median"].get<double>(), r.b_over_a.median, 1e-12);
  EXPECT_DOUBLE_EQ(run["ratio"]["band"]["lo"].get<double>(), r.band.lo);

  const std::string table = format_table(ctx, r, true);
  for (const char* column : {"layer_us", "quantize", "gate_up", "combine", "TOPS", "%ceil", "GB/s",
                             "time/A", "B/A", "A/A", "verdict PROMOTE"})
    EXPECT_NE(table.find(column), std::string::npos) << column << "\n" << table;
  EXPECT_EQ(table.find("ggml "), std::string::npos) << "no ggml figure for this cell\n" << table;
  EXPECT_TRUE(run["ggml_h200"].is_null());
}

// GPU.md's ggml figures (what strata-moe-gpu-cells printed beside each cell) for exactly the cells
// they were measured on, and nothing for any other.
TEST(BenchReport, GgmlFigureOnlyForItsOwnCell) {
  CellSpec c = fake_cell(2);
  c.preset = "qwen35-a3b";
  c.routing = RoutingKind::kUniform;
  c.chunk = 4096;
  EXPECT_EQ(ggml_h200_layer_us(c), 3621);
  c.chunk = 512;
  EXPECT_EQ(ggml_h200_layer_us(c), 1330);
  c.chunk = 1024;
  EXPECT_EQ(ggml_h200_layer_us(c), 0) << "T GPU.md does not list";
  c.chunk = 4096;
  c.preset = "qwen3-30b";
  EXPECT_EQ(ggml_h200_layer_us(c), 3453);
  c.preset = "flash-next";
  c.chunk = 16384;
  EXPECT_EQ(ggml_h200_layer_us(c), 48855);
  CellSpec other = c;
  other.routing = RoutingKind::kSkewed;
  EXPECT_EQ(ggml_h200_layer_us(other), 0) << "ggml measured uniform routing";
  other = c;
  other.preset = "flash-next (modified)";
  EXPECT_EQ(ggml_h200_layer_us(other), 0);
  other = c;
  other.down_type = GgmlType::Q8_0;
  EXPECT_EQ(ggml_h200_layer_us(other), 0);
  other = c;
  other.source = "model.gguf";
  EXPECT_EQ(ggml_h200_layer_us(other), 0);

  // In the reports: the figure and ggml's time over each arm's layer time.
  const uint64_t seed = test::fresh_seed("report_ggml");
  FakeRunner runner(2, 4, 0.7, 0.01, seed);
  ProtocolOptions options;
  options.cells = 2;
  CellSpec cell = fake_cell(2);
  cell.preset = "qwen35-a3b";
  cell.routing = RoutingKind::kUniform;
  cell.chunk = 512;
  const RunResult r = analyse(cell, runner.units(), run_protocol(runner, options), passed_check());
  RunContext ctx;
  ctx.backend = "cuda";
  ctx.device = "NVIDIA H200";
  const nlohmann::json run = nlohmann::json::parse(document_json(ctx, {r}).dump())["runs"][0];
  ASSERT_TRUE(run["ggml_h200"].is_object()) << run.dump();
  EXPECT_EQ(run["ggml_h200"]["layer_us"].get<double>(), 1330);
  EXPECT_NEAR(run["ggml_h200"]["over_A"].get<double>(), 1330 / r.arms[0].unit_us.median, 1e-9);
  EXPECT_NEAR(run["ggml_h200"]["over_B"].get<double>(), 1330 / r.arms[1].unit_us.median, 1e-9);
  const std::string table = format_table(ctx, r, false);
  EXPECT_NE(table.find("ggml    MUL_MAT_ID on the H200 (GPU.md), this cell at T = 512: 1330 us per layer"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace strata::bench
