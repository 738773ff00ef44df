// The error bounds every test declares against the double-precision oracles, in one table keyed by
// (numerics profile, format, stage). Each value was declared before the arm it bounds was first
// measured (DESIGN.md) and is never moved: a new format or stage adds a row, it does not loosen
// one. A lookup with no row fails the test naming the key, so a new format cannot run unbounded.
// DESIGN.md declares the same-quantisation bounds per profile and stage for every format (the
// rows without a format) and the exact-oracle bounds per format (the rows with one).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "formats/ggml_type.hpp"
#include "moe_check.hpp"
#include "pipeline/numerics.hpp"

namespace strata::test {

// What is compared. The format of a stage is the weight format its product multiplies: gate's
// for kGate, up's for kUp and kH, down's for kDown and kY; kBlock is a whole transformer block's
// output (its expert format).
enum class Stage { kGate, kUp, kH, kDown, kY, kBlock };

constexpr const char* stage_name(Stage s) {
  switch (s) {
    case Stage::kGate: return "gate";
    case Stage::kUp: return "up";
    case Stage::kH: return "h";
    case Stage::kDown: return "down";
    case Stage::kY: return "y";
    case Stage::kBlock: return "block";
  }
  return "?";
}

struct StageBounds {
  double same_quant_rel_rms;    // vs same_quant_oracle: rel-RMS over all rows
  double same_quant_worst_row;  // ... and of the worst row
  // vs exact_oracle on the bundled vectors: rel-RMS; infinity where no absolute bound is declared
  // (the exact figures are bounded relative to another arm or to ggml's, below)
  double exact_rel_rms;
};

inline constexpr double kNoBound = std::numeric_limits<double>::infinity();

struct BoundRow {
  Numerics profile;
  std::optional<GgmlType> format;  // nullopt: every format without a row of its own
  Stage stage;
  StageBounds bounds;
};

// clang-format off
inline constexpr BoundRow kBoundTable[] = {
  // profile        format            stage          same-quant rel-RMS, worst row; exact rel-RMS
  {Numerics::kQ8,  std::nullopt,     Stage::kGate,  {1e-4, 1e-3, kNoBound}},
  {Numerics::kQ8,  std::nullopt,     Stage::kUp,    {1e-4, 1e-3, kNoBound}},
  {Numerics::kQ8,  std::nullopt,     Stage::kH,     {1e-4, 1e-3, kNoBound}},
  {Numerics::kQ8,  std::nullopt,     Stage::kDown,  {1e-4, 1e-3, kNoBound}},
  {Numerics::kQ8,  std::nullopt,     Stage::kY,     {1e-4, 1e-3, kNoBound}},
  {Numerics::kQ8,  std::nullopt,     Stage::kBlock, {1e-4, 1e-3, kNoBound}},
  {Numerics::kQ10, std::nullopt,     Stage::kGate,  {1e-4, 1e-3, kNoBound}},
  {Numerics::kQ10, std::nullopt,     Stage::kUp,    {1e-4, 1e-3, kNoBound}},
  {Numerics::kQ10, std::nullopt,     Stage::kH,     {1e-4, 1e-3, kNoBound}},
  {Numerics::kQ10, std::nullopt,     Stage::kDown,  {1e-4, 1e-3, kNoBound}},
  {Numerics::kQ10, std::nullopt,     Stage::kY,     {1e-4, 1e-3, kNoBound}},
  // the bundled qwen3moe layers (IQ3_S gate/up, Q2_0 down)
  {Numerics::kQ10, GgmlType::Q2_0,   Stage::kY,     {1e-4, 1e-3, 7e-3}},
};
// clang-format on

// Bounds relative to another arm or profile on the same inputs (also declared, never moved).
inline constexpr double kQ10OverQ8ExactRatio = 0.4;           // q10's rel-RMS vs exact <= 0.4x q8's
inline constexpr double kFusedOverProductionExactFactor = 1.5;  // a fused arm's vs exact <= 1.5x production's
inline constexpr int64_t kMaxDifferingElements = 0;           // arm vs arm, launch vs launch: bitwise

// The row for (profile, format, stage): the format's own, else the profile's every-format row.
// nullopt when neither exists.
constexpr std::optional<StageBounds> find_bounds(Numerics profile, GgmlType format, Stage stage) {
  std::optional<StageBounds> any;
  for (const BoundRow& row : kBoundTable) {
    if (row.profile != profile || row.stage != stage) continue;
    if (row.format == format) return row.bounds;
    if (!row.format) any = row.bounds;
  }
  return any;
}

inline std::string bounds_key(Numerics profile, GgmlType format, Stage stage) {
  return std::string(numerics_name(profile)) + " / " + std::string(ggml_type_name(format)) + " / " +
         stage_name(stage);
}

// The bounds of a key; a missing row is a test failure naming it (and bounds that pass nothing).
inline StageBounds bounds_for(Numerics profile, GgmlType format, Stage stage) {
  const std::optional<StageBounds> b = find_bounds(profile, format, stage);
  if (b) return *b;
  ADD_FAILURE() << "no declared bound for " << bounds_key(profile, format, stage)
                << " (tests/support/bounds.hpp)";
  return {-1.0, -1.0, -1.0};
}

// EXPECTs `s` (a comparison against the same-quantisation oracle) within the key's bounds.
inline void expect_same_quant(const ErrorStats& s, Numerics profile, GgmlType format, Stage stage,
                              const std::string& what = "") {
  const StageBounds b = bounds_for(profile, format, stage);
  const std::string label = what.empty() ? bounds_key(profile, format, stage) : what;
  EXPECT_LE(s.rel_rms, b.same_quant_rel_rms) << label;
  EXPECT_LE(s.worst_row, b.same_quant_worst_row) << label << " row " << s.worst_row_index;
}

}  // namespace strata::test
