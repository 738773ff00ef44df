#include "bench/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.hpp"

namespace strata::bench {

double quantile(std::vector<double> values, double q) {
  require(!values.empty(), Status::kInvalidArgument, "quantile: empty sample");
  require(q >= 0.0 && q <= 1.0, Status::kInvalidArgument,
          fmt::format("quantile: q = {} outside [0, 1]", q));
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<size_t>(std::floor(pos));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(below);
  return values[below] + frac * (values[above] - values[below]);
}

double median(std::vector<double> values) {
  return quantile(std::move(values), 0.5);
}

Summary summarize(const std::vector<double>& values) {
  Summary s;
  if (values.empty()) return s;
  s.n = static_cast<int64_t>(values.size());
  s.median = quantile(values, 0.5);
  s.q1 = quantile(values, 0.25);
  s.q3 = quantile(values, 0.75);
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

Band noise_band(const std::vector<double>& a_over_a) {
  Band band;
  if (a_over_a.empty()) return band;
  band.lo = std::min(quantile(a_over_a, 0.25), 1.0 - kMinBandHalfWidth);
  band.hi = std::max(quantile(a_over_a, 0.75), 1.0 + kMinBandHalfWidth);
  return band;
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPromote:
      return "PROMOTE";
    case Verdict::kRejectParity:
      return "REJECT-at-parity";
    case Verdict::kRejectSlower:
      return "REJECT-slower";
    case Verdict::kWrong:
      return "WRONG";
  }
  return "WRONG";
}

Decision decide(bool arms_agree, const Summary& b_over_a, const Band& band) {
  if (!arms_agree)
    return {Verdict::kWrong, "A and B disagree on the first chunk: B is not a candidate"};
  if (b_over_a.n == 0 || !std::isfinite(b_over_a.median) || b_over_a.median <= 0.0)
    return {Verdict::kWrong, "no valid paired ratio was measured"};
  const double m = b_over_a.median;
  const double promote_below = band.lo - band.width();
  if (m < promote_below)
    return {Verdict::kPromote,
            fmt::format("median B/A {:.4f} < {:.4f} (A/A band [{:.4f}, {:.4f}] minus its width)", m,
                        promote_below, band.lo, band.hi)};
  if (m > band.hi)
    return {Verdict::kRejectSlower,
            fmt::format("median B/A {:.4f} > {:.4f} (upper edge of the A/A band)", m, band.hi)};
  return {Verdict::kRejectParity, fmt::format("median B/A {:.4f} within [{:.4f}, {:.4f}] (A/A band "
                                              "[{:.4f}, {:.4f}] less one width below)",
                                              m, promote_below, band.hi, band.lo, band.hi)};
}

PairedRatios paired_ratios(const std::vector<RunTimes>& a_runs,
                           const std::vector<RunTimes>& b_runs) {
  require(!b_runs.empty() && a_runs.size() == b_runs.size() + 1, Status::kInvalidArgument,
          fmt::format("paired ratios: need N >= 1 runs of B and N + 1 of A, got {} and {}",
                      b_runs.size(), a_runs.size()));
  const size_t units = a_runs.front().size();
  const auto check_run = [&](const RunTimes& run) {
    require(run.size() == units && units > 0, Status::kInvalidArgument,
            "paired ratios: every run must time the same, non-zero number of units");
    for (double t : run)
      require(std::isfinite(t) && t > 0.0, Status::kInvalidArgument,
              fmt::format("paired ratios: time {} is not a positive number", t));
  };
  for (const RunTimes& run : a_runs) check_run(run);
  for (const RunTimes& run : b_runs) check_run(run);

  PairedRatios r;
  const auto sum = [](const RunTimes& run) { return std::accumulate(run.begin(), run.end(), 0.0); };
  for (size_t i = 0; i < b_runs.size(); ++i) {
    const RunTimes &a0 = a_runs[i], &b = b_runs[i], &a1 = a_runs[i + 1];
    for (size_t u = 0; u < units; ++u) {
      r.b_over_a.push_back(b[u] / std::sqrt(a0[u] * a1[u]));
      r.a_over_a.push_back(std::pow(a1[u] / a0[u], kAaExponent));
    }
    r.cell_b_over_a.push_back(sum(b) / std::sqrt(sum(a0) * sum(a1)));
    r.cell_a_over_a.push_back(std::pow(sum(a1) / sum(a0), kAaExponent));
  }
  return r;
}

}  // namespace strata::bench
