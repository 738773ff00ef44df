// Statistics and the verdict rule of `strata-moe bench`.
//
// The protocol runs A B A B ... A (N cells of B, each bracketed by two runs of A). Every layer on
// every chunk is one *unit*, timed in every run, so each cell gives one paired ratio per unit:
//
//   B/A  = B_i[u] / sqrt(A_i[u] * A_{i+1}[u])   (the bracket cancels a linear drift)
//   A/A  = (A_{i+1}[u] / A_i[u]) ^ sqrt(3/4)     (the A/A control)
//
// With independent noise of variance s^2 on log-times, log(B/A) has variance 1.5 s^2 and
// log(A_{i+1}/A_i) 2 s^2; the exponent sqrt(3/4) gives the A/A ratios the same spread as the B/A
// ratios would have if B were A. The noise band is the A/A ratios' interquartile range, widened
// to at least [1 - 0.5%, 1 + 0.5%] (timers and clocks resolve no better).
//
// Verdict, with m = median B/A and w = band width (hi - lo):
//   WRONG             A and B disagreed before timing (or no unit was timed)
//   PROMOTE           m < lo - w: B faster than the band's lower edge by a full band width
//   REJECT-slower     m > hi
//   REJECT-at-parity  otherwise (inside the band, or faster by less than a band width)
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::bench {

// Sample quantile with linear interpolation between order statistics (R's type 7); q in [0, 1].
// Throws Error(kInvalidArgument) on an empty sample.
double quantile(std::vector<double> values, double q);
double median(std::vector<double> values);

struct Summary {
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  int64_t n = 0;
  double iqr() const { return q3 - q1; }
};
Summary summarize(const std::vector<double>& values);  // all zero with n = 0 when empty

inline constexpr double kMinBandHalfWidth = 0.005;
inline constexpr double kAaExponent = 0.8660254037844386;  // sqrt(3/4), see above

struct Band {
  double lo = 1.0 - kMinBandHalfWidth, hi = 1.0 + kMinBandHalfWidth;
  double width() const { return hi - lo; }
};
// The interquartile range of the (already scaled) A/A ratios, widened to the minimum.
Band noise_band(const std::vector<double>& a_over_a);

enum class Verdict { kPromote, kRejectParity, kRejectSlower, kWrong };
std::string_view verdict_name(Verdict verdict);  // "PROMOTE", "REJECT-at-parity", ...

struct Decision {
  Verdict verdict = Verdict::kWrong;
  std::string reason;
};
Decision decide(bool arms_agree, const Summary& b_over_a, const Band& band);

// Per-unit times of one run of one arm, in the unit order of the cell.
using RunTimes = std::vector<double>;

struct PairedRatios {
  std::vector<double> b_over_a;       // per (cell, unit)
  std::vector<double> a_over_a;       // per (cell, unit), scaled by kAaExponent
  std::vector<double> cell_b_over_a;  // per cell, from the cell's summed times
  std::vector<double> cell_a_over_a;
};
// a_runs: N + 1 runs of A; b_runs: N runs of B; every run the same number of units, all times
// positive. Throws Error(kInvalidArgument) otherwise.
PairedRatios paired_ratios(const std::vector<RunTimes>& a_runs,
                           const std::vector<RunTimes>& b_runs);

}  // namespace strata::bench
