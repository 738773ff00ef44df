#include "commands.hpp"
#include "common/error.hpp"

namespace strata::cli {

Runner add_run_command(CLI::App& app) {
  app.add_subcommand("run", "(not yet available)");
  return [] () -> int { fail(Status::kUnsupported, "'run' is not available in this build yet"); };
}

}  // namespace strata::cli
