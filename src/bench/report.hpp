// The readable side of `strata-moe bench`: the table, the run's context (date, commit, device,
// command line) and a progress bar on stderr. bench/json.hpp writes the same data as JSON.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/protocol.hpp"

namespace strata::bench {

// GPU.md: int8 mma.sync m16n8k32 on the H200, the ceiling of the production and fused arms.
inline constexpr double kH200MmaSyncTops = 1295.0;

struct RunContext {
  std::string backend;      // "cpu", "cuda"
  std::string device;       // GPU name, or the CPU model and thread count
  std::string command;      // the command line, shell-quoted
  std::string date;         // UTC, ISO 8601
  std::string git_commit;   // "" when unknown
  double ceiling_tops = 0;  // 0: no ceiling (CPU, or a GPU without a measured one)
};

std::string utc_now_iso8601();
// The library source tree's commit compiled in at configure time (strata_moe_git_commit()), or "":
// never the repository of the working directory.
std::string git_commit();
std::string shell_quote_command(int argc, char** argv);
// The ceiling for a device name: 1295 TOPS for an H200, 0 for anything without a measured one.
double ceiling_tops_for(const std::string& device_name);

// The table for one run (one chunk size): per-arm µs per layer and per phase, TOPS (GOPS on the
// CPU), fraction of the ceiling, GB/s of expert weights, the ratio B/A with its spread, the A/A
// band and the verdict. per_layer adds one row per model layer.
std::string format_table(const RunContext& context, const RunResult& result, bool per_layer);

// A progress bar on stderr that appears only once a run has lasted `delay_s`: a redrawn line on a
// terminal, a line per tenth otherwise (logs).
class Progress {
 public:
  explicit Progress(std::string label, double delay_s = 2.0, std::FILE* stream = stderr);
  void update(int64_t done, int64_t total);
  void finish();  // ends the line if anything was drawn

 private:
  std::string label_;
  double delay_s_;
  std::FILE* stream_;
  bool tty_;
  bool drawn_ = false;
  int last_tenth_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace strata::bench
