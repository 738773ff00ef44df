#include "commands.hpp"
#include "common/error.hpp"

namespace strata::cli {

Runner add_bench_command(CLI::App& app) {
  app.add_subcommand("bench", "(not yet available)");
  return [] () -> int { fail(Status::kUnsupported, "'bench' is not available in this build yet"); };
}

}  // namespace strata::cli
