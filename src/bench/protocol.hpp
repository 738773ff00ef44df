// The timing protocol of `strata-moe bench`, apart from any backend: a Runner times one layer on
// one chunk for arm A or B; run_protocol warms up and alternates A B A B ... A; analyse turns the
// times into per-arm summaries, paired ratios and a verdict (stats.hpp has the rule).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/cell.hpp"
#include "bench/stats.hpp"
#include "pipeline/layer.hpp"
#include "reference/oracle.hpp"

namespace strata::bench {

inline constexpr int kPhaseCount = 6;
inline constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {
    "quantize", "group", "gate_up", "swiglu", "down", "combine"};

// One layer on one chunk. Units run chunk-major (every layer on chunk 0, then chunk 1, ...), as
// chunked prefill does, so consecutive units read different weights.
struct Unit {
  int layer = 0;
  int64_t chunk = 0;
  int64_t tokens = 0;
  double ops = 0;           // layer_ops(tokens, k, d, f)
  double weight_bytes = 0;  // gate + up + down bytes of the experts this chunk routes to
};

struct UnitTime {
  double total_us = 0;
  std::array<double, kPhaseCount> phase_us{};
  bool has_phases = false;  // the backend timed each phase (CUDA events)
};

class Runner {
 public:
  virtual ~Runner() = default;
  virtual const std::vector<Unit>& units() const = 0;
  // Runs `unit` with arm `slot` (0 = A, 1 = B) and returns its time, measured on the device.
  virtual UnitTime run(int slot, size_t unit) = 0;
};

struct ProtocolOptions {
  int cells = 3;         // runs of B; A runs cells + 1 times
  int warmup_units = 4;  // untimed units per arm before the first cell (at least 1)
};

// times[run][unit]; runs of A and B kept apart, in the order they ran.
struct Measurements {
  std::vector<std::vector<UnitTime>> a_runs, b_runs;
};

// progress(done, total) after every unit.
using ProgressFn = std::function<void(int64_t done, int64_t total)>;
Measurements run_protocol(Runner& runner, const ProtocolOptions& options,
                          const ProgressFn& progress = {});

// ---- the check before timing -----------------------------------------------------------------

// DESIGN.md's same-quantisation bounds for a whole layer.
inline constexpr double kSameQuantRelRms = 1e-4;
inline constexpr double kSameQuantWorstRow = 1e-3;

struct ErrorStats {
  double rel_rms = 0, worst_row = 0;
};
// rel_rms = ||got - ref|| / ||ref||; worst_row = max over rows of the same. NaN in got -> NaN.
ErrorStats compare_to_reference(const float* got, const double* ref, int64_t rows, int64_t cols);

struct AgreementCheck {
  bool passed = false;
  bool bitwise_claimed = false;
  int64_t bitwise_diffs = -1;  // elements whose bits differ (-1: not compared)
  int64_t compared_elems = 0;
  int64_t oracle_tokens = 0;
  std::array<ErrorStats, 2> oracle{};  // A, B against the same-quantisation oracle
  std::string message;
};

// y_a, y_b: both arms' [in.n_tokens, d] outputs of the same chunk on `host_layer` (host memory).
// The first oracle_tokens rows of each go against the same-quantisation oracle (bounds above), fed
// the CPU production arm's requantised h; when the arms claim bitwise equality every element must
// also match bit for bit.
// Each arm is held to the same-quantisation oracle of its own profile (numerics_a, numerics_b).
AgreementCheck check_agreement(const MoeLayerWeights& host_layer, const LayerInputs& in,
                               const float* y_a, const float* y_b, bool bitwise_claimed,
                               int64_t oracle_tokens, int threads,
                               Numerics numerics_a = Numerics::kQ8,
                               Numerics numerics_b = Numerics::kQ8);

// ---- analysis ------------------------------------------------------------------------------

struct ArmResult {
  std::string name;
  Summary unit_us;                              // one layer on one chunk
  std::array<Summary, kPhaseCount> phase_us{};  // empty summaries when !has_phases
  bool has_phases = false;
  std::vector<double> cell_ms;  // every run's sum over units
  double median_cell_ms = 0;
  double ops_per_s = 0;           // cell ops / median cell time
  double weight_bytes_per_s = 0;  // cell weight bytes / median cell time
  std::vector<double> layer_us;   // per model layer: median unit time over its chunks and runs
};

struct RunResult {
  CellSpec cell;
  int64_t units = 0;
  double cell_ops = 0, cell_weight_bytes = 0;
  std::array<ArmResult, 2> arms;
  PairedRatios ratios;
  Summary b_over_a, a_over_a, cell_b_over_a;
  Band band;
  AgreementCheck check;
  Decision decision;
};

RunResult analyse(const CellSpec& cell, const std::vector<Unit>& units, const Measurements& m,
                  const AgreementCheck& check);

}  // namespace strata::bench
