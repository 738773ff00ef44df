// Validators shared by the subcommands' options.
#include <fmt/format.h>

#include <charconv>
#include <string>

#include "commands.hpp"

namespace strata::cli {

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        int64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (ec == std::errc::result_out_of_range ||
            (ec == std::errc() && stop == end && (value < lo || value > hi)))
          return fmt::format("{} is outside [{}, {}]", text, lo, hi);
        if (ec != std::errc() || stop != end)
          return fmt::format("'{}' is not an integer (expected one in [{}, {}])", text, lo, hi);
        return "";
      },
      fmt::format("INT in [{}, {}]", lo, hi));
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || stop != end)
          return fmt::format("'{}' is not a seed (an integer in [0, 2^64 - 1])", text);
        return "";
      },
      "UINT64");
}

}  // namespace strata::cli
