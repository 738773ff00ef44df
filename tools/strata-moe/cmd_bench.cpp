// strata-moe bench: two arms of the pipeline timed side by side in one process, A B A B ... A,
// with an A/A noise band and a verdict (src/bench/stats.hpp has the rule; docs/bench.md the rest).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench/json.hpp"
#include "bench/report.hpp"
#include "bench_runner.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text.hpp"
#include "synth/synth.hpp"
#include "io/files.hpp"

namespace strata::cli {
namespace {

// A CPU run with nothing specified finishes in seconds.
constexpr int64_t kCpuTokens = 256, kCpuChunk = 128;
constexpr int64_t kCpuD = 512, kCpuF = 256, kCpuExperts = 16;
constexpr int kCpuK = 4;
constexpr int64_t kGpuTokens = 131072, kGpuChunk = 4096;
constexpr int kMaxWeightSets = 4;
// Bounds on the protocol's own counts (docs/bench.md): far above any useful run.
constexpr int kMaxLayers = 1024;
constexpr int kMaxCells = 1000;
constexpr int kMaxWarmupUnits = 100000;

struct BenchArgs {
  std::string backend = "cpu", arms = "production,fused", preset, gate_up = "iq3_s", down = "q2_0";
  std::string routing = "skewed", gguf, out, numerics;
  int64_t d = 0, ffn = 0, experts = 0;
  int k = 0, layers = 0, cells = 3, weight_sets = 0, threads = 0, warmup = 4, weight_offset = -1;
  int64_t tokens = 0, oracle_tokens = 16;
  std::vector<int64_t> chunks;
  uint64_t seed = 1;
  bool json = false, per_layer = false, quiet = false;
};

// The command line as the shell gave it (Linux), for the results file; "strata-moe bench" if
// unreadable.
std::string process_command_line() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(file, arg, '\0')) args.push_back(arg);
  if (args.empty()) return "strata-moe bench";
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  return bench::shell_quote_command(static_cast<int>(argv.size()), argv.data());
}

GgmlType format_arg(const std::string& name, const char* option) {
  const auto info = ggml_type_by_name(name);
  require(info.has_value(), Status::kInvalidArgument,
          fmt::format("{}: unknown format '{}'", option, name));
  require(synth::synth_supports(info->type), Status::kInvalidArgument,
          fmt::format("{}: '{}' is not a block format of expert weights (a quantised ggml type "
                      "is expected)",
                      option, name));
  return info->type;
}

// Flags first, then the preset, then the backend's defaults.
bench::CellSpec resolve_cell(const BenchArgs& a) {
  const bool cpu = a.backend == "cpu";
  bench::CellSpec cell;
  cell.arms = bench::parse_arms(a.arms);
  if (!a.numerics.empty()) bench::apply_numerics(cell.arms, a.numerics);
  for (const bench::ArmChoice& arm : cell.arms)
    require(!cpu || arm.arm == Arm::kProduction || arm.arm == Arm::kFused, Status::kInvalidArgument,
            "--arms: " + arm.name + " is a CUDA arm; the CPU backend has production and fused");
  cell.gate_up_type = format_arg(a.gate_up, "--gate-up");
  cell.down_type = format_arg(a.down, "--down");
  cell.routing =
      a.routing == "uniform" ? bench::RoutingKind::kUniform : bench::RoutingKind::kSkewed;
  cell.seed = a.seed;
  cell.cells = a.cells;
  require(!cpu || a.weight_offset < 0, Status::kInvalidArgument,
          "--weight-offset: an option of --backend cuda");
  require(a.weight_offset < 0 || a.weight_offset % 2 == 0, Status::kInvalidArgument,
          "--weight-offset: must be even (the formats' blocks are 2-byte aligned)");
  cell.weight_offset = a.weight_offset < 0 ? 0 : a.weight_offset;  // CPU runs refuse one above
  const bench::Preset* preset = nullptr;
  if (!a.preset.empty()) {
    preset = bench::find_preset(a.preset);
    require(preset != nullptr, Status::kInvalidArgument,
            fmt::format("--preset: unknown '{}' (known: {})", a.preset, bench::preset_names()));
    cell.preset = a.preset;
  }
  const bool explicit_geometry = a.d > 0 || a.ffn > 0 || a.experts > 0;
  if (!a.gguf.empty()) {
    require(preset == nullptr && !explicit_geometry, Status::kInvalidArgument,
            "--gguf: the geometry comes from the file; drop --preset, --d, --ffn and --experts");
  } else if (preset == nullptr && !(cpu && !explicit_geometry)) {
    require(a.d > 0 && a.ffn > 0 && a.experts > 0 && a.k > 0, Status::kInvalidArgument,
            fmt::format("give --preset ({}) or all of --d, --ffn, --experts and --k",
                        bench::preset_names()));
  }
  cell.d = a.d > 0 ? a.d : preset ? preset->d : kCpuD;
  cell.f = a.ffn > 0 ? a.ffn : preset ? preset->f : kCpuF;
  cell.n_expert = a.experts > 0 ? a.experts : preset ? preset->n_expert : kCpuExperts;
  cell.k = a.k > 0 ? a.k : preset ? preset->k : a.gguf.empty() ? kCpuK : 0;
  if (preset != nullptr && (explicit_geometry || a.k > 0)) cell.preset += " (modified)";
  // The real model's layer count for a preset on the GPU; one layer otherwise (and on the CPU).
  cell.layers = a.layers > 0 ? a.layers
                             : (!a.gguf.empty()    ? 0
                                : (preset && !cpu) ? preset->layers
                                                   : 1);
  cell.tokens = a.tokens > 0 ? a.tokens : cpu ? kCpuTokens : kGpuTokens;
  require(cell.k >= 1 || !a.gguf.empty(), Status::kInvalidArgument, "--k: must be >= 1");
  if (a.gguf.empty()) {
    require(cell.k <= cell.n_expert, Status::kInvalidArgument,
            fmt::format("--k: {} exceeds the expert count {}", cell.k, cell.n_expert));
    bench::check_geometry(cell.geometry_label(), cell.d, cell.f, cell.gate_up_type, cell.down_type);
    cell.weight_sets = a.weight_sets > 0 ? a.weight_sets : std::min(cell.layers, kMaxWeightSets);
    // Everything the inputs will hold, checked before the first byte is generated.
    const uint64_t set_bytes = synth::layer_bytes(cell.d, cell.f, cell.n_expert, cell.gate_up_type,
                                                  cell.down_type);
    require(set_bytes <= limits::kMaxSyntheticWeightBytes / static_cast<uint64_t>(cell.weight_sets),
            Status::kInvalidArgument,
            fmt::format("geometry {}: {} weight set(s) of {} bytes each are more than the limit of "
                        "{} bytes",
                        cell.geometry_label(), cell.weight_sets, set_bytes,
                        limits::kMaxSyntheticWeightBytes));
  }
  limits::checked_product("--tokens x --k (routed pairs)", cell.tokens, std::max(cell.k, 1),
                          limits::kMaxPairs);
  return cell;
}

std::vector<int64_t> resolve_chunks(const BenchArgs& a, const bench::CellSpec& cell) {
  std::vector<int64_t> chunks = a.chunks;
  if (chunks.empty())
    chunks.push_back(std::min(cell.tokens, a.backend == "cpu" ? kCpuChunk : kGpuChunk));
  for (int64_t c : chunks)
    require(c >= 1 && c <= cell.tokens, Status::kInvalidArgument,
            fmt::format("--chunk: {} (must be in [1, --tokens = {}])", c, cell.tokens));
  return chunks;
}

int run(const BenchArgs& a, const std::string& command) {
  io::OutputSet outputs({{"--gguf", a.gguf}});
  io::Output* results_out = a.out.empty() ? nullptr : &outputs.add("--out", a.out);
  bench::CellSpec cell = resolve_cell(a);
  const std::vector<int64_t> chunks = resolve_chunks(a, cell);
  const int64_t max_chunk = *std::max_element(chunks.begin(), chunks.end());

  if (a.backend == "cuda") benchrun::require_cuda_device();
  if (!a.quiet)
    std::fprintf(stderr, "bench: preparing weights and inputs for %s\n",
                 a.gguf.empty() ? cell.geometry_label().c_str()
                                : printable(a.gguf).c_str());
  benchrun::HostInputs inputs = benchrun::make_host_inputs(cell, a.gguf, max_chunk);
  cell = inputs.cell;  // a GGUF file fills in the geometry, formats and layer count

  benchrun::SessionOptions options;
  options.threads = a.threads;
  options.oracle_tokens = a.oracle_tokens;
  options.warmup_units = a.warmup;
  options.progress = !a.quiet;
  std::unique_ptr<benchrun::Session> session = a.backend == "cuda"
                                                   ? benchrun::make_cuda_session(inputs, options)
                                                   : benchrun::make_cpu_session(inputs, options);

  bench::RunContext ctx;
  ctx.backend = a.backend;
  ctx.device = session->device();
  ctx.command = command;
  ctx.date = bench::utc_now_iso8601();
  ctx.git_commit = bench::git_commit();
  ctx.ceiling_tops = session->ceiling_tops();

  std::vector<bench::RunResult> results;
  bool wrong = false;
  for (int64_t chunk : chunks) {
    bench::CellSpec run_cell = cell;
    run_cell.chunk = chunk;
    results.push_back(session->run(run_cell));
    wrong = wrong || results.back().decision.verdict == bench::Verdict::kWrong;
    if (!a.json) {
      std::printf("%s%s", results.size() > 1 ? "\n" : "",
                  bench::format_table(ctx, results.back(), a.per_layer).c_str());
      std::fflush(stdout);
    }
  }

  const nlohmann::json doc = bench::document_json(ctx, results);
  // Paths and the command line need not be UTF-8: invalid bytes become U+FFFD, not an exception.
  const std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (a.json) std::cout << text;
  if (results_out != nullptr) {
    results_out->write(text.data(), text.size());
    outputs.commit();
  }
  if (wrong)
    std::fprintf(
        stderr,
        "strata-moe: error: bench: verdict WRONG (the arms disagree; see the check line)\n");
  return wrong ? 1 : 0;
}

}  // namespace

Runner add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time two arms side by side (A B A B ... A) on a benchmark cell and give a verdict.\n"
      "Presets (d/f/E/k, layers): flash-next 2560/640/512/10, 48 layers; qwen35-a3b "
      "2048/512/256/8, 40;\n"
      "qwen3-30b 2048/768/128/8, 48; gpt-oss-120b 2880/2880/128/4, 36.\n"
      "Verdict, with m = median of the paired B/A time ratios and [lo, hi] the A/A noise band (the "
      "A/A\n"
      "ratios' interquartile range, at least [0.995, 1.005]), w = hi - lo:\n"
      "  PROMOTE if m < lo - w; REJECT-slower if m > hi; REJECT-at-parity otherwise;\n"
      "  WRONG (exit status 1) if A and B disagree on the first chunk (bitwise, and against the\n"
      "  same-quantisation oracle: rel-RMS 1e-4, worst row 1e-3).");
  cmd->add_option("--backend", args->backend, "cpu or cuda (default cpu)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--arms", args->arms,
                  "A,B: the arms compared, B against A (default production,fused)");
  cmd->add_option("--numerics", args->numerics,
                  "P or A,B: the numerics profile of both arms, or of A and of B (q8, q10; "
                  "default q8); --arms production,production --numerics q8,q10 A/Bs the profiles");
  cmd->add_option("--preset", args->preset, "flash-next, qwen35-a3b, qwen3-30b or gpt-oss-120b");
  cmd->add_option("--d", args->d, "model width d (overrides the preset)")
      ->check(integer_in(1, limits::kMaxWidth));
  cmd->add_option("--ffn", args->ffn, "expert FFN width f")
      ->check(integer_in(1, limits::kMaxWidth));
  cmd->add_option("--experts", args->experts, "expert count E")
      ->check(integer_in(1, limits::kMaxExperts));
  cmd->add_option("--k", args->k, "experts per token k")
      ->check(integer_in(1, limits::kMaxExpertsPerToken));
  cmd->add_option("--gate-up", args->gate_up, "gate/up format (default iq3_s)");
  cmd->add_option("--down", args->down, "down format (default q2_0)");
  cmd->add_option(
         "--layers", args->layers,
         "layers per cell (default: the preset's real MoE layer count on cuda: flash-next 48, "
         "qwen35-a3b 40, qwen3-30b 48, gpt-oss-120b 36; 1 on cpu or for an explicit geometry; "
         "every MoE layer of a --gguf file)")
      ->check(integer_in(1, kMaxLayers));
  cmd->add_option("--tokens", args->tokens,
                  "tokens per layer per cell (default 131072 on cuda, 256 on cpu)")
      ->check(integer_in(1, limits::kMaxTokens));
  cmd->add_option("--chunk", args->chunks,
                  "chunk size T; several, comma-separated, give one run each (default 4096 on "
                  "cuda, 128 on cpu)")
      ->delimiter(',')
      ->check(integer_in(1, limits::kMaxTokens));
  cmd->add_option("--cells", args->cells,
                  "cells: runs of B, each between two runs of A (default 3)")
      ->check(integer_in(1, kMaxCells));
  cmd->add_option("--seed", args->seed,
                  "seed of the weights, routings and activations (default 1)")
      ->check(seed_value());
  cmd->add_option("--routing", args->routing,
                  "skewed (Zipf-like, some experts empty; default) or uniform")
      ->check(CLI::IsMember({"skewed", "uniform"}));
  cmd->add_option("--gguf", args->gguf,
                  "time a model file's routed-expert layers (the stacked ffn_{gate,up,down}_exps "
                  "tensors of each MoE layer) instead of random blocks; the router, shared experts "
                  "and the block's keys are not read (run computes and checks the whole block)");
  cmd->add_option("--weight-offset", args->weight_offset,
                  "cuda: bytes past a device allocation at which each weight tensor is uploaded, "
                  "even (default 0: 16-byte aligned, as the library uploads a model's tensors; 2: "
                  "the least alignment the kernels carry)")
      ->check(integer_in(0, 254));
  cmd->add_option("--weight-sets", args->weight_sets,
                  "distinct random weight sets the layers rotate over (default min(layers, 4))")
      ->check(integer_in(1, kMaxLayers));
  cmd->add_option("--threads", args->threads,
                  "CPU threads, also for the oracle (0: OpenMP default)")
      ->check(integer_in(0, limits::kMaxThreads));
  cmd->add_option("--oracle-tokens", args->oracle_tokens,
                  "tokens of the first chunk checked against the oracle (16)")
      ->check(integer_in(1, limits::kMaxTokens));
  cmd->add_option("--warmup", args->warmup, "untimed units per arm before timing (default 4)")
      ->check(integer_in(1, kMaxWarmupUnits));
  cmd->add_flag("--json", args->json, "print the results as JSON on stdout instead of the table");
  cmd->add_option("--out", args->out, "also write the JSON results to this file");
  cmd->add_flag("--per-layer", args->per_layer, "add a row per layer to the table");
  cmd->add_flag("--quiet", args->quiet, "no progress on stderr");
  return [args] { return run(*args, process_command_line()); };
}

}  // namespace strata::cli
