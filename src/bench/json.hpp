// The JSON form of a bench run (schema "strata-moe-bench/1"; docs/bench.md lists the fields).
// Header-only: nlohmann_json belongs to the CLI and the tests, never to the library itself.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "bench/report.hpp"

namespace strata::bench {

inline constexpr const char* kJsonSchema = "strata-moe-bench/1";

inline nlohmann::json summary_json(const Summary& s) {
  return {{"median", s.median}, {"q1", s.q1},   {"q3", s.q3},
          {"min", s.min},       {"max", s.max}, {"n", s.n}};
}

inline nlohmann::json run_json(const RunContext& ctx, const RunResult& r) {
  using nlohmann::json;
  const CellSpec& c = r.cell;
  json cell = {{"preset", c.preset.empty() ? json(nullptr) : json(c.preset)},
               {"source", c.source},
               {"d", c.d},
               {"f", c.f},
               {"E", c.n_expert},
               {"k", c.k},
               {"gate_up", std::string(ggml_type_name(c.gate_up_type))},
               {"down", std::string(ggml_type_name(c.down_type))},
               {"layers", c.layers},
               {"weight_sets", c.weight_sets},
               {"tokens", c.tokens},
               {"T", c.chunk},
               {"units", r.units},
               {"cells", c.cells},
               {"seed", c.seed},
               {"routing", std::string(routing_name(c.routing))},
               {"weight_offset", c.weight_offset},
               {"ops_per_cell", r.cell_ops},
               {"weight_bytes_per_cell", r.cell_weight_bytes}};

  const AgreementCheck& k = r.check;
  json check = {{"passed", k.passed},
                {"bitwise_claimed", k.bitwise_claimed},
                {"bitwise_diffs", k.bitwise_diffs},
                {"compared_elems", k.compared_elems},
                {"oracle_tokens", k.oracle_tokens},
                {"bounds", {{"rel_rms", kSameQuantRelRms}, {"worst_row", kSameQuantWorstRow}}},
                {"A", {{"rel_rms", k.oracle[0].rel_rms}, {"worst_row", k.oracle[0].worst_row}}},
                {"B", {{"rel_rms", k.oracle[1].rel_rms}, {"worst_row", k.oracle[1].worst_row}}},
                {"message", k.message}};

  json results = json::array();
  for (int a = 0; a < 2; ++a) {
    const ArmResult& arm = r.arms[a];
    const bool timed = arm.unit_us.n > 0;
    json phases = nullptr;
    if (arm.has_phases && timed) {
      phases = json::object();
      for (int p = 0; p < kPhaseCount; ++p)
        phases[std::string(kPhaseNames[p])] = summary_json(arm.phase_us[p]);
    }
    const double tops = arm.ops_per_s / 1e12;
    results.push_back(
        {{"slot", a == 0 ? "A" : "B"},
         {"arm", arm.name},
         {"layer_us", summary_json(arm.unit_us)},
         {"phases_us", phases},
         {"cell_ms", arm.cell_ms},
         {"median_cell_ms", arm.median_cell_ms},
         {"tops", timed ? json(tops) : json(nullptr)},
         {"gops", timed ? json(arm.ops_per_s / 1e9) : json(nullptr)},
         {"ceiling_fraction",
          timed && ctx.ceiling_tops > 0 ? json(tops / ctx.ceiling_tops) : json(nullptr)},
         {"weight_gb_per_s", timed ? json(arm.weight_bytes_per_s / 1e9) : json(nullptr)},
         {"per_layer_us", arm.layer_us}});
  }

  json ratio = nullptr;
  if (r.b_over_a.n > 0)
    ratio = {{"b_over_a", summary_json(r.b_over_a)},
             {"a_over_a", summary_json(r.a_over_a)},
             {"cell_b_over_a", r.ratios.cell_b_over_a},
             {"cell_a_over_a", r.ratios.cell_a_over_a},
             {"band", {{"lo", r.band.lo}, {"hi", r.band.hi}, {"width", r.band.width()}}},
             {"promote_below", r.band.lo - r.band.width()}};

  // ggml's figure for this cell on the H200 (GPU.md), where it has one.
  const double ggml_us = ggml_h200_layer_us(c);
  json ggml = nullptr;
  if (ggml_us > 0) {
    ggml = {{"layer_us", ggml_us}};
    for (int a = 0; a < 2; ++a)
      ggml[a == 0 ? "over_A" : "over_B"] =
          r.arms[a].unit_us.n > 0 ? json(ggml_us / r.arms[a].unit_us.median) : json(nullptr);
  }

  return {{"cell", cell},
          {"arms", {{"A", c.arms.at(0).name}, {"B", c.arms.at(1).name}}},
          {"ggml_h200", ggml},
          {"check", check},
          {"results", results},
          {"ratio", ratio},
          {"verdict", std::string(verdict_name(r.decision.verdict))},
          {"reason", r.decision.reason}};
}

inline nlohmann::json document_json(const RunContext& ctx, const std::vector<RunResult>& runs) {
  using nlohmann::json;
  json doc = {{"schema", kJsonSchema},
              {"date", ctx.date},
              {"git_commit", ctx.git_commit.empty() ? json(nullptr) : json(ctx.git_commit)},
              {"command", ctx.command},
              {"backend", ctx.backend},
              {"device", ctx.device},
              {"ceiling_tops", ctx.ceiling_tops > 0 ? json(ctx.ceiling_tops) : json(nullptr)},
              {"runs", json::array()}};
  for (const RunResult& r : runs) doc["runs"].push_back(run_json(ctx, r));
  return doc;
}

}  // namespace strata::bench
