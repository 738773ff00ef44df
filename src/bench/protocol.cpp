#include "bench/protocol.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "common/error.hpp"
#include "cpu/moe_cpu.hpp"

namespace strata::bench {

Measurements run_protocol(Runner& runner, const ProtocolOptions& options,
                          const ProgressFn& progress) {
  const std::vector<Unit>& units = runner.units();
  require(!units.empty(), Status::kInvalidArgument, "bench: the cell has no units to time");
  require(options.cells >= 1, Status::kInvalidArgument,
          fmt::format("--cells: {} (must be >= 1)", options.cells));
  const size_t n_units = units.size();
  const size_t warmup =
      std::min<size_t>(n_units, static_cast<size_t>(std::max(options.warmup_units, 1)));
  const int64_t total =
      static_cast<int64_t>(2 * warmup + (2 * static_cast<size_t>(options.cells) + 1) * n_units);
  int64_t done = 0;
  const auto step = [&] {
    ++done;
    if (progress) progress(done, total);
  };

  // Warm-up: both arms, so neither pays the first workspace growth or a cold instruction cache.
  for (size_t u = 0; u < warmup; ++u)
    for (int slot = 0; slot < 2; ++slot) {
      runner.run(slot, u);
      step();
    }

  Measurements m;
  const auto timed_run = [&](int slot) {
    std::vector<UnitTime> times(n_units);
    for (size_t u = 0; u < n_units; ++u) {
      times[u] = runner.run(slot, u);
      step();
    }
    return times;
  };
  for (int cell = 0; cell < options.cells; ++cell) {
    m.a_runs.push_back(timed_run(0));
    m.b_runs.push_back(timed_run(1));
  }
  m.a_runs.push_back(timed_run(0));  // closes the last bracket
  return m;
}

ErrorStats compare_to_reference(const float* got, const double* ref, int64_t rows, int64_t cols) {
  double err_total = 0, ref_total = 0, worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double err_row = 0, ref_row = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double g = got[r * cols + c], e = ref[r * cols + c];
      err_row += (g - e) * (g - e);
      ref_row += e * e;
    }
    err_total += err_row;
    ref_total += ref_row;
    // A zero reference row must come out exactly zero (DESIGN.md); anything else is infinitely off.
    const double row_rel =
        ref_row > 0 ? std::sqrt(err_row / ref_row) : (err_row > 0 ? INFINITY : 0.0);
    if (!(row_rel <= worst)) worst = row_rel;  // also takes a NaN
  }
  ErrorStats s;
  s.rel_rms = ref_total > 0 ? std::sqrt(err_total / ref_total) : (err_total > 0 ? INFINITY : 0.0);
  s.worst_row = worst;
  return s;
}

AgreementCheck check_agreement(const MoeLayerWeights& host_layer, const LayerInputs& in,
                               const float* y_a, const float* y_b, bool bitwise_claimed,
                               int64_t oracle_tokens, int threads, Numerics numerics_a,
                               Numerics numerics_b) {
  AgreementCheck check;
  std::vector<double> oracle_y_a;  // A's oracle y, reused by B in the same profile
  check.bitwise_claimed = bitwise_claimed;
  const int64_t d = host_layer.d;
  check.compared_elems = in.n_tokens * d;
  int64_t diffs = 0;
  for (int64_t i = 0; i < check.compared_elems; ++i)
    diffs += std::memcmp(&y_a[i], &y_b[i], sizeof(float)) != 0 ? 1 : 0;
  check.bitwise_diffs = diffs;

  LayerInputs subset = in;
  subset.n_tokens = std::clamp<int64_t>(oracle_tokens, 1, in.n_tokens);
  check.oracle_tokens = subset.n_tokens;
  // "The same requantised h" of DESIGN.md: the oracle's down product is fed the CPU production
  // arm's h, so an h code that flips at a rounding boundary between fp32 and double does not count
  // against the arms; that h is itself held to the oracle's own h below. One oracle per profile.
  std::vector<std::string> problems;
  const Numerics profiles[2] = {numerics_a, numerics_b};
  const float* ys[2] = {y_a, y_b};
  const char* arm_names[2] = {"A", "B"};
  for (int a = 0; a < 2; ++a) {
    if (a == 1 && numerics_b == numerics_a) {
      check.oracle[1] = compare_to_reference(y_b, oracle_y_a.data(), subset.n_tokens, d);
      break;
    }
    CpuDebugOutputs reference_arm;
    std::vector<float> reference_y(static_cast<size_t>(subset.n_tokens * d));
    run_layer_cpu(host_layer, subset, Arm::kProduction, threads, reference_y.data(),
                  &reference_arm, profiles[a]);
    const OracleOutput ref =
        same_quant_oracle(host_layer, subset, threads, reference_arm.h.data(), profiles[a]);
    check.oracle[a] = compare_to_reference(ys[a], ref.y.data(), subset.n_tokens, d);
    if (a == 0) oracle_y_a.assign(ref.y.begin(), ref.y.end());
    const ErrorStats h_error = compare_to_reference(reference_arm.h.data(), ref.h.data(),
                                                    subset.n_tokens * subset.k, host_layer.f);
    if (!(h_error.rel_rms <= kSameQuantRelRms) || !(h_error.worst_row <= kSameQuantWorstRow))
      problems.push_back(fmt::format(
          "the CPU production arm's h ({}; the oracle's down input) is off the oracle's own h: "
          "rel-RMS {:.3g}, worst row {:.3g}",
          numerics_name(profiles[a]), h_error.rel_rms, h_error.worst_row));
  }
  for (int a = 0; a < 2; ++a) {
    const ErrorStats& e = check.oracle[a];
    if (!(e.rel_rms <= kSameQuantRelRms) || !(e.worst_row <= kSameQuantWorstRow))
      problems.push_back(fmt::format(
          "{} vs the {} same-quantisation oracle on {} tokens: rel-RMS {:.3g} (bound {:g}), "
          "worst row {:.3g} (bound {:g})",
          arm_names[a], numerics_name(profiles[a]), subset.n_tokens, e.rel_rms, kSameQuantRelRms,
          e.worst_row, kSameQuantWorstRow));
  }
  if (bitwise_claimed && diffs != 0)
    problems.push_back(
        fmt::format("A and B claim bitwise equality but {} of {} output elements differ", diffs,
                    check.compared_elems));
  check.passed = problems.empty();
  if (check.passed) {
    check.message = fmt::format(
        "A and B within the same-quantisation bounds on {} tokens{}", subset.n_tokens,
        bitwise_claimed ? fmt::format(", bitwise equal on {} elements", check.compared_elems)
                        : std::string());
  } else {
    for (const std::string& p : problems) check.message += (check.message.empty() ? "" : "; ") + p;
  }
  return check;
}

namespace {

ArmResult summarize_arm(const std::string& name, const std::vector<std::vector<UnitTime>>& runs,
                        const std::vector<Unit>& units, int n_layers, double cell_ops,
                        double cell_bytes) {
  ArmResult arm;
  arm.name = name;
  if (runs.empty()) return arm;
  std::vector<double> all;
  std::array<std::vector<double>, kPhaseCount> phases;
  std::vector<std::vector<double>> per_layer(static_cast<size_t>(n_layers));
  arm.has_phases = true;
  for (const auto& run : runs) {
    double cell_us = 0;
    for (size_t u = 0; u < run.size(); ++u) {
      const UnitTime& t = run[u];
      all.push_back(t.total_us);
      cell_us += t.total_us;
      per_layer[static_cast<size_t>(units[u].layer)].push_back(t.total_us);
      arm.has_phases = arm.has_phases && t.has_phases;
      for (int p = 0; p < kPhaseCount; ++p) phases[p].push_back(t.phase_us[p]);
    }
    arm.cell_ms.push_back(cell_us * 1e-3);
  }
  arm.unit_us = summarize(all);
  if (arm.has_phases)
    for (int p = 0; p < kPhaseCount; ++p) arm.phase_us[p] = summarize(phases[p]);
  for (const auto& layer_times : per_layer)
    arm.layer_us.push_back(layer_times.empty() ? 0.0 : median(layer_times));
  arm.median_cell_ms = median(arm.cell_ms);
  arm.ops_per_s = cell_ops / (arm.median_cell_ms * 1e-3);
  arm.weight_bytes_per_s = cell_bytes / (arm.median_cell_ms * 1e-3);
  return arm;
}

std::vector<RunTimes> totals(const std::vector<std::vector<UnitTime>>& runs) {
  std::vector<RunTimes> out;
  for (const auto& run : runs) {
    RunTimes t;
    for (const UnitTime& u : run) t.push_back(u.total_us);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

RunResult analyse(const CellSpec& cell, const std::vector<Unit>& units, const Measurements& m,
                  const AgreementCheck& check) {
  require(cell.arms.size() == 2, Status::kInvalidArgument,
          "bench: a cell compares exactly two arms");
  RunResult r;
  r.cell = cell;
  r.check = check;
  r.units = static_cast<int64_t>(units.size());
  int n_layers = 0;
  for (const Unit& u : units) {
    r.cell_ops += u.ops;
    r.cell_weight_bytes += u.weight_bytes;
    n_layers = std::max(n_layers, u.layer + 1);
  }
  r.arms[0] =
      summarize_arm(cell.arms[0].name, m.a_runs, units, n_layers, r.cell_ops, r.cell_weight_bytes);
  r.arms[1] =
      summarize_arm(cell.arms[1].name, m.b_runs, units, n_layers, r.cell_ops, r.cell_weight_bytes);
  if (!m.b_runs.empty()) {
    r.ratios = paired_ratios(totals(m.a_runs), totals(m.b_runs));
    r.b_over_a = summarize(r.ratios.b_over_a);
    r.a_over_a = summarize(r.ratios.a_over_a);
    r.cell_b_over_a = summarize(r.ratios.cell_b_over_a);
    r.band = noise_band(r.ratios.a_over_a);
  }
  r.decision = decide(check.passed, r.b_over_a, r.band);
  return r;
}

}  // namespace strata::bench
