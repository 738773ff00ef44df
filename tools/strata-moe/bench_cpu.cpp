// `strata-moe bench --backend cpu`: the CPU arms timed per layer with a steady clock (the CPU arms
// expose no phase boundaries cheaply, so only whole-layer times).
#include <omp.h>

#include <chrono>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "bench_runner.hpp"
#include "common/threads.hpp"
#include "cpu/moe_cpu.hpp"

namespace strata::cli::benchrun {
namespace {

std::string cpu_model() {
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown CPU";
}

class CpuRunner final : public bench::Runner {
 public:
  CpuRunner(const HostInputs& inputs, const bench::CellSpec& cell, int threads)
      : inputs_(inputs),
        cell_(cell),
        threads_(threads),
        units_(inputs.units(cell.chunk)),
        y_(static_cast<size_t>(cell.chunk * cell.d)) {}

  const std::vector<bench::Unit>& units() const override { return units_; }

  bench::UnitTime run(int slot, size_t unit) override {
    const bench::Unit& u = units_[unit];
    const LayerInputs in = inputs_.unit_inputs(u, cell_.chunk);
    const auto start = std::chrono::steady_clock::now();
    const bench::ArmChoice& arm = cell_.arms[static_cast<size_t>(slot)];
    run_layer_cpu(inputs_.layer_weights(u.layer), in, arm.arm, threads_, y_.data(), nullptr,
                  arm.numerics);
    const auto stop = std::chrono::steady_clock::now();
    bench::UnitTime t;
    t.total_us = std::chrono::duration<double, std::micro>(stop - start).count();
    return t;
  }

  const float* y() const { return y_.data(); }

 private:
  const HostInputs& inputs_;
  const bench::CellSpec& cell_;
  int threads_;
  std::vector<bench::Unit> units_;
  std::vector<float> y_;
};

class CpuSession final : public Session {
 public:
  CpuSession(HostInputs& inputs, const SessionOptions& options)
      : inputs_(inputs), options_(options) {}

  std::string device() const override {
    const int threads = resolve_threads(options_.threads);
    return fmt::format("{}, {} threads", cpu_model(), threads);
  }
  double ceiling_tops() const override { return 0.0; }

  bench::RunResult run(const bench::CellSpec& cell) override {
    CpuRunner runner(inputs_, cell, options_.threads);
    const bench::Unit& first = runner.units().front();
    const LayerInputs in = inputs_.unit_inputs(first, cell.chunk);
    const MoeLayerWeights& layer = inputs_.layer_weights(first.layer);
    const size_t n = static_cast<size_t>(first.tokens * cell.d);
    std::vector<float> y_a(n), y_b(n);
    run_layer_cpu(layer, in, cell.arms[0].arm, options_.threads, y_a.data(), nullptr,
                  cell.arms[0].numerics);
    run_layer_cpu(layer, in, cell.arms[1].arm, options_.threads, y_b.data(), nullptr,
                  cell.arms[1].numerics);
    const bench::AgreementCheck check = bench::check_agreement(
        layer, in, y_a.data(), y_b.data(), bench::arms_claim_bitwise(cell.arms[0], cell.arms[1]),
        options_.oracle_tokens, options_.threads, cell.arms[0].numerics, cell.arms[1].numerics);
    return check_then_time(cell, runner.units(), runner, check, options_);
  }

 private:
  HostInputs& inputs_;
  SessionOptions options_;
};

}  // namespace

std::unique_ptr<Session> make_cpu_session(HostInputs& inputs, const SessionOptions& options) {
  return std::make_unique<CpuSession>(inputs, options);
}

}  // namespace strata::cli::benchrun
