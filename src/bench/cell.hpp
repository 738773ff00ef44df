// What one `strata-moe bench` run measures: the geometry presets of GPU.md, the formats, the
// arms compared, and the checks that refuse a cell the formats cannot tile.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/run.hpp"
#include "formats/ggml_type.hpp"

namespace strata::bench {

// A benchmark geometry with the real model's MoE layer count (the default --layers).
struct Preset {
  std::string_view name;
  int64_t d, f, n_expert;
  int k;
  int layers;
};

std::span<const Preset> presets();
const Preset* find_preset(std::string_view name);  // nullptr when unknown
std::string preset_names();                        // "flash-next, qwen35-a3b, ..." for messages

enum class RoutingKind { kSkewed, kUniform };
std::string_view routing_name(RoutingKind routing);

// One arm as the bench names it, and the library arm that runs it.
struct ArmChoice {
  std::string name;  // the arm's name (pipeline/run.hpp), "/q10" appended by apply_numerics
  Arm arm = Arm::kProduction;
  Numerics numerics = Numerics::kQ8;
};

// --numerics "P" (both arms) or "P,Q" (A in P, B in Q): sets each arm's profile and, when the two
// differ or any is q10, appends "/q8" or "/q10" to the arm names. Throws Error(kInvalidArgument)
// naming --numerics for an unknown profile or a count other than one or two.
void apply_numerics(std::vector<ArmChoice>& arms, std::string_view csv);

// "A,B" -> two arms (any of arm_names()). Throws Error(kInvalidArgument) naming the unknown arm and
// the known ones.
std::vector<ArmChoice> parse_arms(std::string_view csv);

// Whether the library promises bit-identical outputs for the two arms (then the pre-timing check
// demands zero differing elements, not just the oracle bounds). Every pair of arms of one profile
// does: each folds every output in the profile's order on every backend.
bool arms_claim_bitwise(Arm a, Arm b);
// The same, for two arm choices: never across profiles (they define different bits).
bool arms_claim_bitwise(const ArmChoice& a, const ArmChoice& b);

// Everything that names a cell; the runner fills the rest from it.
struct CellSpec {
  std::string preset;             // "" for an explicit geometry
  std::string source = "random";  // "random" or the GGUF file
  int64_t d = 0, f = 0, n_expert = 0;
  int k = 0;
  GgmlType gate_up_type = GgmlType::IQ3_S, down_type = GgmlType::Q2_0;
  int layers = 1;
  int weight_sets = 1;  // distinct weight sets the layers rotate over (layer l uses set l % sets)
  int64_t tokens = 0;   // per layer per cell, split into chunks
  int64_t chunk = 0;
  int cells = 3;
  uint64_t seed = 1;
  RoutingKind routing = RoutingKind::kSkewed;
  int weight_offset = 0;  // cuda: bytes past an allocation at which each weight tensor sits
  std::vector<ArmChoice> arms;

  int64_t chunks_per_layer() const { return (tokens + chunk - 1) / chunk; }
  std::string geometry_label() const;  // "qwen35-a3b (d=2048 f=512 E=256 k=8)"
};

// Throws Error(kInvalidArgument) naming the geometry and the format when a format's blocks do not
// tile a row: gate/up rows hold d values, down rows f values; d and f must be multiples of 32.
void check_geometry(const std::string& geometry_label, int64_t d, int64_t f, GgmlType gate_up,
                    GgmlType down);

// Multiply-adds of one layer on T tokens counted as 2 ops: 2 * T * k * 3 * d * f.
double layer_ops(int64_t tokens, int k, int64_t d, int64_t f);

// ggml's CUDA MUL_MAT_ID on the H200 for one layer of the cell at T = chunk (../shared/GPU.md: merged
// gate_up + down, f32 activations, uniform routing), µs; 0 unless the cell is such a figure's:
// an unmodified flash-next, qwen35-a3b or qwen3-30b preset, IQ3_S gate/up + Q2_0 down, uniform
// routing and a T GPU.md lists.
double ggml_h200_layer_us(const CellSpec& cell);

}  // namespace strata::bench
