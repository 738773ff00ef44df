// The CLI's subcommands: each file registers one on the app and returns the function that runs
// it. Errors are thrown as strata::Error; main() turns them into one line and an exit status.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace strata::cli {

using Runner = std::function<int()>;  // returns the process exit status

Runner add_info_command(CLI::App& app);
Runner add_dequant_command(CLI::App& app);
Runner add_run_command(CLI::App& app);
Runner add_demo_command(CLI::App& app);
Runner add_bench_command(CLI::App& app);

}  // namespace strata::cli
