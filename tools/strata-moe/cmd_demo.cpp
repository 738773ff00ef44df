// strata-moe demo: a synthetic qwen35-a3b-sized layer through every arm of one backend in each
// numerics profile, each checked against its profile's same-quantisation oracle and the exact
// oracle (and, on CUDA, bitwise against the CPU production arm of the profile), with a timing
// table that puts the profiles side by side.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "api/backend.hpp"
#include "bench_runner.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "cpu/moe_cpu.hpp"
#include "demo_cuda.hpp"
#include "reference/oracle.hpp"
#include "synth/synth.hpp"

namespace strata::cli {
namespace {

// Declared before anything is measured (DESIGN.md).
constexpr double kSameQuantRelRms = 1e-4;
constexpr double kSameQuantWorstRow = 1e-3;
// The oracles (double precision) see about kOracleTokens tokens, every n-th one: their cost, not
// the arms', bounds the demo's time. Outputs of a token depend on that token alone.
constexpr int64_t kOracleTokens = 64;
constexpr int64_t kCpuDefaultTokens = 512;
constexpr int64_t kCudaDefaultTokens = 4096;
constexpr int kCudaTimedRuns = 10;

struct DemoArgs {
  std::string backend = "auto";
  int64_t tokens = 0;  // 0: not given (kCpuDefaultTokens or kCudaDefaultTokens)
  uint64_t seed = 20240607;
  int threads = 0;
  std::vector<std::string> numerics{"q8", "q10"};
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Progress line on stderr for steps that take more than a second.
template <class Fn>
auto step(const char* what, Fn&& fn) {
  const auto start = Clock::now();
  auto result = fn();
  const double s = seconds_since(start);
  if (s > 1.0) std::fprintf(stderr, "  %-44s %6.1f s\n", what, s);
  return result;
}

struct Stats {
  double rel_rms = 0, worst_row = 0;
};

Stats compare(const std::vector<float>& got_rows, const std::vector<double>& ref, int64_t rows,
              int64_t cols) {
  Stats s;
  double err_total = 0, ref_total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double err = 0, norm = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double diff = double{got_rows[r * cols + c]} - ref[r * cols + c];
      err += diff * diff;
      norm += ref[r * cols + c] * ref[r * cols + c];
    }
    err_total += err;
    ref_total += norm;
    const double row = norm > 0 ? std::sqrt(err / norm) : (err == 0 ? 0.0 : INFINITY);
    s.worst_row = std::isnan(row) || std::isnan(s.worst_row) ? NAN : std::max(s.worst_row, row);
  }
  s.rel_rms = ref_total > 0 ? std::sqrt(err_total / ref_total) : (err_total == 0 ? 0.0 : INFINITY);
  return s;
}

// One row of the table: an arm's output and its time. `tokens` lists the rows y holds: every
// token, or (rows run on the CPU for a profile the device has no arm for) the oracle tokens.
struct ArmRun {
  std::string name;
  Numerics numerics = Numerics::kQ8;
  std::string backend;
  double ms = 0;
  int64_t tokens = 0;
  std::vector<float> y;
};

int64_t count_differing(const float* a, const float* b, int64_t n) {
  int64_t diffs = 0;
  for (int64_t i = 0; i < n; ++i) diffs += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return diffs;
}

// Both CPU arms in one profile, best of two runs after one warm-up.
std::vector<ArmRun> run_cpu_arms(const MoeLayerWeights& weights, const LayerInputs& in,
                                 int threads, Numerics numerics) {
  std::unique_ptr<LayerBackend> backend = make_cpu_backend(weights);
  std::vector<ArmRun> runs;
  for (Arm arm : {Arm::kProduction, Arm::kFused}) {
    RunOptions options;
    options.threads = threads;
    options.arm = arm;
    options.numerics = numerics;
    const char* name = arm_name(backend->choose(options).arm);
    ArmRun& run = runs.emplace_back();
    run.name = name;
    run.numerics = numerics;
    run.backend = "cpu";
    run.tokens = in.n_tokens;
    run.y.assign(static_cast<size_t>(in.n_tokens * weights.d), NAN);
    run.ms = INFINITY;
    const std::string label = fmt::format("{} ({})", name, numerics_name(numerics));
    step(label.c_str(), [&] {
      for (int rep = 0; rep < 3; ++rep) {
        const auto start = Clock::now();
        backend->run(in, options, run.y.data());
        if (rep > 0) run.ms = std::min(run.ms, 1e3 * seconds_since(start));
      }
      return 0;
    });
  }
  return runs;
}

int run(const DemoArgs& args, bool tokens_given) {
  if (tokens_given) limits::require_in_range("--tokens", args.tokens, 1, limits::kMaxTokens);
  std::string backend_name = args.backend;
  if (backend_name == "auto") backend_name = cuda_device_count() > 0 ? "cuda" : "cpu";
  const bool on_cuda = backend_name == "cuda";
  // Before the synthetic layer is built (seconds): a missing device is one clear error.
  if (on_cuda) benchrun::require_cuda_device();

  synth::LayerSpec spec;  // qwen35-a3b geometry: d 2048, f 512, E 256; IQ3_S gate/up, Q2_0 down
  spec.seed = args.seed;
  const int k = 8;
  const int64_t T = tokens_given ? args.tokens : on_cuda ? kCudaDefaultTokens : kCpuDefaultTokens;
  const int64_t d = spec.d, f = spec.f;
  // Before the banner and the seconds of weight generation: a T the inputs cannot hold.
  limits::checked_product("--tokens x k (routed pairs)", T, k, limits::kMaxPairs);
  limits::checked_product("--tokens x d (activations)", T, d, limits::kMaxActivationValues);
  std::fprintf(stderr, "strata-moe demo: d=%lld f=%lld E=%lld k=%d T=%lld seed=%llu, backend %s\n",
               static_cast<long long>(d), static_cast<long long>(f),
               static_cast<long long>(spec.n_expert), k, static_cast<long long>(T),
               static_cast<unsigned long long>(args.seed), backend_name.c_str());
  const synth::SyntheticLayer layer =
      step("synthetic layer (IQ3_S / IQ3_S / Q2_0)", [&] { return synth::make_layer(spec); });
  const synth::Routing routing = synth::skewed_routing(T, spec.n_expert, k, args.seed + 1);
  const std::vector<float> x = synth::random_activations(T, d, args.seed + 2);
  const LayerInputs in{x.data(), routing.ids.data(), routing.weights.data(), T, k};

  std::vector<Numerics> profiles;
  for (const std::string& name : args.numerics) {
    const std::optional<Numerics> n = parse_numerics(name);
    require(n.has_value(), Status::kInvalidArgument,
            fmt::format("--numerics: '{}' is not a profile (q8 or q10)", name));
    if (std::find(profiles.begin(), profiles.end(), *n) == profiles.end()) profiles.push_back(*n);
  }

  // ---- the oracle tokens: every stride-th one ---------------------------------------------------
  const int64_t stride = (T + kOracleTokens - 1) / kOracleTokens;
  std::vector<int64_t> picked;
  for (int64_t t = 0; t < T; t += stride) picked.push_back(t);
  const int64_t n_sub = static_cast<int64_t>(picked.size());
  std::vector<float> x_sub(static_cast<size_t>(n_sub * d)), w_sub(static_cast<size_t>(n_sub * k));
  std::vector<int32_t> ids_sub(static_cast<size_t>(n_sub * k));
  for (int64_t i = 0; i < n_sub; ++i) {
    std::copy_n(x.data() + picked[i] * d, d, x_sub.data() + i * d);
    std::copy_n(routing.ids.data() + picked[i] * k, k, ids_sub.data() + i * k);
    std::copy_n(routing.weights.data() + picked[i] * k, k, w_sub.data() + i * k);
  }
  const LayerInputs in_sub{x_sub.data(), ids_sub.data(), w_sub.data(), n_sub, k};

  // ---- the arms, timed, profile by profile ------------------------------------------------------
  std::vector<ArmRun> runs;
  std::string device = "cpu";
  for (Numerics numerics : profiles) {
    if (on_cuda) {
      const std::string label = fmt::format("CUDA arms, {} (upload, warm-up, timed runs)",
                                            numerics_name(numerics));
      demo::DeviceRuns gpu = step(label.c_str(), [&] {
        return demo::run_cuda_arms(layer.weights, in, kCudaTimedRuns, numerics);
      });
      device = gpu.device;
      for (demo::DeviceArmRun& a : gpu.arms)
        runs.push_back({a.name, numerics, "cuda", a.median_ms, T, std::move(a.y)});
    } else {
      for (ArmRun& run : run_cpu_arms(layer.weights, in, args.threads, numerics))
        runs.push_back(std::move(run));
    }
  }

  // ---- per profile: the CPU production arm and both oracles on the oracle tokens ----------------
  // The CPU production arm's h is the "same requantised h" the same-quantisation oracle is fed,
  // its y the rows every arm of the profile must equal bit for bit.
  const int oracle_threads = args.threads > 0 ? args.threads : 2;
  const OracleOutput exact = step("exact oracle", [&] {
    return exact_oracle(layer.weights, in_sub, oracle_threads);
  });
  struct ProfileReference {
    std::vector<float> y_cpu;  // [n_sub, d]
    OracleOutput same;
  };
  std::vector<ProfileReference> refs;
  for (Numerics numerics : profiles) {
    ProfileReference& ref = refs.emplace_back();
    CpuDebugOutputs debug;
    ref.y_cpu.assign(static_cast<size_t>(n_sub * d), NAN);
    run_layer_cpu(layer.weights, in_sub, Arm::kProduction, args.threads, ref.y_cpu.data(), &debug,
                  numerics);
    const std::string label = fmt::format("same-quantisation oracle ({})", numerics_name(numerics));
    ref.same = step(label.c_str(), [&] {
      return same_quant_oracle(layer.weights, in_sub, oracle_threads, debug.h.data(), numerics);
    });
  }

  // ---- table -------------------------------------------------------------------------------------
  const double ops_unit = on_cuda ? 1e12 : 1e9;
  std::printf("%-12s %-7s %-8s %10s %9s %14s %14s %12s  %s\n", "arm", "profile", "backend",
              "time (ms)", on_cuda ? "TOPS" : "GOPS", "rel-RMS same", "worst-row same",
              "rel-RMS exact", "verdict");
  bool all_pass = true;
  std::vector<std::string> summary;
  for (size_t p = 0; p < profiles.size(); ++p) {
    const Numerics numerics = profiles[p];
    const ArmRun* first = nullptr;
    int64_t arm_diffs = 0, cpu_diffs_total = 0;
    for (const ArmRun& run : runs) {
      if (run.numerics != numerics) continue;
      if (first == nullptr) first = &run;
      else arm_diffs += count_differing(first->y.data(), run.y.data(), run.tokens * d);
    }
    for (const ArmRun& run : runs) {
      if (run.numerics != numerics) continue;
      std::vector<float> rows(static_cast<size_t>(n_sub * d));
      for (int64_t i = 0; i < n_sub; ++i) {
        const int64_t row = run.tokens == T ? picked[i] : i;
        std::copy_n(run.y.data() + row * d, d, rows.data() + i * d);
      }
      const int64_t cpu_diffs = count_differing(rows.data(), refs[p].y_cpu.data(), n_sub * d);
      cpu_diffs_total += cpu_diffs;
      const Stats vs_same = compare(rows, refs[p].same.y, n_sub, d);
      const Stats vs_exact = compare(rows, exact.y, n_sub, d);
      const double rate = 2.0 * run.tokens * k * 3.0 * d * f / (run.ms * 1e-3) / ops_unit;
      const bool pass = vs_same.rel_rms <= kSameQuantRelRms &&
                        vs_same.worst_row <= kSameQuantWorstRow && arm_diffs == 0 &&
                        cpu_diffs == 0;
      all_pass = all_pass && pass;
      std::printf("%-12s %-7s %-8s %10.3f %9.2f %14.3e %14.3e %12.3e  %s\n", run.name.c_str(),
                  numerics_name(numerics), run.backend.c_str(), run.ms, rate, vs_same.rel_rms,
                  vs_same.worst_row, vs_exact.rel_rms, pass ? "PASS" : "FAIL");
    }
    summary.push_back(fmt::format(
        "{}: arms bitwise equal: {} ({} differing elements); against the CPU production arm on "
        "the oracle tokens: {} ({} differing)",
        numerics_name(numerics), arm_diffs == 0 ? "yes" : "NO", arm_diffs,
        cpu_diffs_total == 0 ? "equal" : "NOT EQUAL", cpu_diffs_total));
  }
  for (const std::string& line : summary) std::printf("%s\n", line.c_str());
  std::printf("oracles on %lld of %lld tokens\n", static_cast<long long>(n_sub),
              static_cast<long long>(T));
  if (on_cuda)
    std::printf("device: %s; time: CUDA events, median of %d runs after a warm-up\n",
                device.c_str(), kCudaTimedRuns);
  return all_pass ? 0 : 1;
}

}  // namespace

Runner add_demo_command(CLI::App& app) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* cmd =
      app.add_subcommand("demo", "Synthetic qwen35-a3b layer: both arms vs both oracles, timed");
  cmd->add_option("--backend", args->backend, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  CLI::Option* tokens =
      cmd->add_option("--tokens", args->tokens, "tokens T (default 512 on the CPU, 4096 on CUDA)")
          ->check(integer_in(1, limits::kMaxTokens));
  cmd->add_option("--seed", args->seed, "seed of the synthetic layer, routing and activations")
      ->check(seed_value());
  cmd->add_option("--threads", args->threads, "CPU threads (0: OpenMP default; at most 1024)")
      ->check(integer_in(0, limits::kMaxThreads));
  cmd->add_option("--numerics", args->numerics, "profiles to run, side by side (default q8,q10)")
      ->delimiter(',')
      ->check(CLI::IsMember({"q8", "q10"}));
  return [args, tokens] { return run(*args, tokens->count() > 0); };
}

}  // namespace strata::cli
