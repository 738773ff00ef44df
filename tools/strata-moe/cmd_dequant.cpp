#include "commands.hpp"
#include "common/error.hpp"

namespace strata::cli {

Runner add_dequant_command(CLI::App& app) {
  app.add_subcommand("dequant", "(not yet available)");
  return [] () -> int { fail(Status::kUnsupported, "'dequant' is not available in this build yet"); };
}

}  // namespace strata::cli
