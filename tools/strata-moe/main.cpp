// strata-moe: info, dequant, run, demo, bench.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common/error.hpp"

namespace {

// 2 for what the caller got wrong, 1 for everything else that failed.
int exit_status_for(strata::Status status) {
  return status == strata::Status::kInvalidArgument ? 2 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"strata-moe: quantised MoE expert layers on int8 tensor cores"};
  app.set_version_flag("--version", std::string("strata-moe ") + STRATA_MOE_VERSION);
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, strata::cli::Runner>> commands;
  const auto add = [&](strata::cli::Runner (*adder)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    strata::cli::Runner runner = adder(app);
    commands.emplace_back(app.get_subcommands({}).at(before), std::move(runner));
  };
  add(&strata::cli::add_info_command);
  add(&strata::cli::add_dequant_command);
  add(&strata::cli::add_run_command);
  add(&strata::cli::add_demo_command);
  add(&strata::cli::add_bench_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    for (auto& [sub, runner] : commands)
      if (sub->parsed()) return runner();
  } catch (const strata::Error& e) {
    std::fprintf(stderr, "strata-moe: error: %s\n", e.what());
    return exit_status_for(e.status());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata-moe: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
