#include "commands.hpp"
#include "common/error.hpp"

namespace strata::cli {

Runner add_info_command(CLI::App& app) {
  app.add_subcommand("info", "(not yet available)");
  return [] () -> int { fail(Status::kUnsupported, "'info' is not available in this build yet"); };
}

}  // namespace strata::cli
