#include "bench/report.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>

#include "api/version.hpp"

namespace strata::bench {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string git_commit() {
  return library_git_commit();
}

std::string shell_quote_command(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789-_=.,/:+@%") == std::string::npos;
    if (i > 0) out.push_back(' ');
    if (plain) {
      out += arg;
      continue;
    }
    out.push_back('\'');
    for (char c : arg) {
      if (c == '\'')
        out += "'\\''";
      else
        out.push_back(c);
    }
    out.push_back('\'');
  }
  return out;
}

double ceiling_tops_for(const std::string& device_name) {
  return device_name.find("H200") != std::string::npos ? kH200MmaSyncTops : 0.0;
}

namespace {

// Three significant digits below 100, whole numbers above: small CPU rates stay readable.
std::string rate_cell(double v) {
  return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

std::string us_cell(const Summary& s, bool present) {
  return present && s.n > 0 ? fmt::format("{:.1f}", s.median) : "-";
}

}  // namespace

std::string format_table(const RunContext& ctx, const RunResult& r, bool per_layer) {
  const CellSpec& c = r.cell;
  const bool gpu = ctx.ceiling_tops > 0 || ctx.backend == "cuda";
  std::string out;
  out += fmt::format("strata-moe bench on {} ({}), {}{}\n", ctx.backend, ctx.device, ctx.date,
                     ctx.git_commit.empty() ? "" : ", commit " + ctx.git_commit.substr(0, 12));
  const std::string offset =
      ctx.backend == "cuda" ? fmt::format(", weights at +{} bytes", c.weight_offset) : "";
  out += fmt::format("cell    {}, gate/up {}, down {}, {} routing, seed {}, source {}{}\n",
                     c.geometry_label(), ggml_type_name(c.gate_up_type),
                     ggml_type_name(c.down_type), routing_name(c.routing), c.seed, c.source, offset);
  out += fmt::format(
      "        {} layer(s) x {} tokens in chunks of {} = {} units per cell; {} cell(s) run A B ... "
      "A; "
      "{} weight set(s)\n",
      c.layers, c.tokens, c.chunk, r.units, c.cells, c.weight_sets);
  out += fmt::format("check   {}: {}\n", r.check.passed ? "passed" : "FAILED", r.check.message);
  out += "\n";

  const char* rate_unit = gpu ? "TOPS" : "GOPS";
  const double rate_scale = gpu ? 1e12 : 1e9;
  out += fmt::format(
      "{:<4} {:<12} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11} {:>8} {:>7} {:>8} "
      "{:>7}\n",
      "arm", "name", "layer_us", "IQR_us", "quantize", "group", "gate_up", "swiglu", "down",
      "combine", "cell_ms", rate_unit, "%ceil", "GB/s", "time/A");
  for (int a = 0; a < 2; ++a) {
    const ArmResult& arm = r.arms[a];
    std::array<std::string, kPhaseCount> ph;
    for (int p = 0; p < kPhaseCount; ++p) ph[p] = us_cell(arm.phase_us[p], arm.has_phases);
    const bool timed = arm.unit_us.n > 0;
    const double rate = arm.ops_per_s / rate_scale;
    // Median paired time ratio to A measured in the same process (A against itself is 1).
    const std::string vs_a = !timed   ? "-"
                             : a == 0 ? "1.000"
                                      : fmt::format("{:.3f}", r.b_over_a.median);
    out += fmt::format(
        "{:<4} {:<12} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11} {:>8} {:>7} {:>8} "
        "{:>7}\n",
        a == 0 ? "A" : "B", arm.name, timed ? fmt::format("{:.1f}", arm.unit_us.median) : "-",
        timed ? fmt::format("{:.1f}", arm.unit_us.iqr()) : "-", ph[0], ph[1], ph[2], ph[3], ph[4],
        ph[5], timed ? fmt::format("{:.2f}", arm.median_cell_ms) : "-",
        timed ? rate_cell(rate) : "-",
        timed && ctx.ceiling_tops > 0
            ? fmt::format("{:.1f}%", 100.0 * arm.ops_per_s / 1e12 / ctx.ceiling_tops)
            : "-",
        timed ? rate_cell(arm.weight_bytes_per_s / 1e9) : "-", vs_a);
  }
  if (per_layer && r.arms[0].unit_us.n > 0) {
    out += fmt::format("\n{:>6} {:>12} {:>12} {:>8}\n", "layer", "A_us", "B_us", "B/A");
    for (size_t l = 0; l < r.arms[0].layer_us.size(); ++l) {
      const double a = r.arms[0].layer_us[l], b = r.arms[1].layer_us[l];
      out += fmt::format("{:>6} {:>12.1f} {:>12.1f} {:>8.4f}\n", l, a, b, a > 0 ? b / a : 0.0);
    }
  }
  const double ggml_us = ggml_h200_layer_us(c);
  if (ggml_us > 0 && r.arms[0].unit_us.n > 0)
    out += fmt::format("ggml    MUL_MAT_ID on the H200 (GPU.md), this cell at T = {}: {:.0f} us per layer; "
                       "ggml/A {:.2f}x, ggml/B {:.2f}x\n",
                       c.chunk, ggml_us, ggml_us / r.arms[0].unit_us.median,
                       r.arms[1].unit_us.n > 0 ? ggml_us / r.arms[1].unit_us.median : 0.0);
  out += "\n";
  if (r.b_over_a.n > 0) {
    out += fmt::format(
        "B/A     {} / {}: median {:.4f}, IQR [{:.4f}, {:.4f}] over {} paired units; per cell "
        "[{}]\n",
        r.arms[1].name, r.arms[0].name, r.b_over_a.median, r.b_over_a.q1, r.b_over_a.q3,
        r.b_over_a.n, fmt::format("{:.4f}", fmt::join(r.ratios.cell_b_over_a, ", ")));
    out += fmt::format(
        "A/A     band [{:.4f}, {:.4f}] (width {:.4f}; A/A median {:.4f} over {} paired units)\n",
        r.band.lo, r.band.hi, r.band.width(), r.a_over_a.median, r.a_over_a.n);
  }
  out += fmt::format("verdict {}: {}\n", verdict_name(r.decision.verdict), r.decision.reason);
  return out;
}

Progress::Progress(std::string label, double delay_s, std::FILE* stream)
    : label_(std::move(label)),
      delay_s_(delay_s),
      stream_(stream),
      tty_(isatty(fileno(stream)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::update(int64_t done, int64_t total) {
  using seconds = std::chrono::duration<double>;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = seconds(now - start_).count();
  if (elapsed < delay_s_ || total <= 0) return;
  const double frac = std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0);
  const double eta = frac > 0 ? elapsed * (1.0 - frac) / frac : 0.0;
  if (tty_) {
    if (drawn_ && seconds(now - last_draw_).count() < 0.1 && done < total) return;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(frac * kWidth);
    std::fprintf(stream_, "\r%s [%s%s] %3d%% %5.0fs left ", label_.c_str(),
                 std::string(filled, '#').c_str(), std::string(kWidth - filled, '.').c_str(),
                 static_cast<int>(100 * frac), eta);
  } else {
    const int tenth = static_cast<int>(frac * 10);
    if (tenth == last_tenth_) return;
    last_tenth_ = tenth;
    std::fprintf(stream_, "%s: %d%% (%.0f s, about %.0f s left)\n", label_.c_str(), tenth * 10,
                 elapsed, eta);
  }
  std::fflush(stream_);
  drawn_ = true;
  last_draw_ = now;
}

void Progress::finish() {
  if (drawn_ && tty_) std::fprintf(stream_, "\n");
  drawn_ = false;
}

}  // namespace strata::bench
