#include "commands.hpp"
#include "common/error.hpp"

namespace strata::cli {

Runner add_demo_command(CLI::App& app) {
  app.add_subcommand("demo", "(not yet available)");
  return [] () -> int { fail(Status::kUnsupported, "'demo' is not available in this build yet"); };
}

}  // namespace strata::cli
