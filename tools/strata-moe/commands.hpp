// The CLI's subcommands: each file registers one on the app and returns the function that runs
// it. Errors are thrown as strata::Error; main() turns them into one line and an exit status.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>

namespace strata::cli {

using Runner = std::function<int()>;  // returns the process exit status

// An integer option in [lo, hi]: text that is not an integer, or one outside the range (also
// one too large for 64 bits), is refused with the text as given and the bounds.
CLI::Validator integer_in(int64_t lo, int64_t hi);
// A seed: decimal digits of a value in [0, 2^64 - 1] (a sign or a wider value is refused, not
// wrapped).
CLI::Validator seed_value();

Runner add_info_command(CLI::App& app);
Runner add_dequant_command(CLI::App& app);
Runner add_run_command(CLI::App& app);
Runner add_demo_command(CLI::App& app);
Runner add_bench_command(CLI::App& app);
Runner add_support_command(CLI::App& app);

}  // namespace strata::cli
