// Text from files and command lines as it may be printed: names and keys read from a model
// file can hold control characters and terminal escape sequences.
#pragma once
#include <string>
#include <string_view>

namespace strata {

// `text` with every byte that is not printable escaped: C0 and C1 controls, DEL and bytes that
// are not valid UTF-8 become \xNN (\n, \t and \r as such); a backslash becomes \\. Printable
// ASCII and valid UTF-8 pass unchanged.
std::string printable(std::string_view text);

}  // namespace strata
