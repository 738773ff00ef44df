// The one error type of the library. Every failure carries a status code (the C API's
// strata_moe_status) and a message that names the argument, tensor or key and the reason.
#pragma once
#include <stdexcept>
#include <string>

namespace strata {

enum class Status : int {
  kOk = 0,
  kInvalidArgument = 1,   // a caller's argument is wrong (shape, range, null pointer)
  kBadFile = 2,           // a file is damaged, truncated or not what it claims
  kUnsupported = 3,       // a format or geometry an arm does not cover
  kIo = 4,                // the OS refused a read, open or mmap
  kCuda = 5,              // a CUDA runtime error
  kOutOfMemory = 6,
  kInternal = 7,
};

class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message)
      : std::runtime_error(without_nul(message)), status_(status) {}
  Status status() const noexcept { return status_; }

 private:
  // what() is a C string: a NUL byte from a file's name or key would end the message there and
  // lose the reason, so each one is shown as U+2400 (the symbol for null).
  static std::string without_nul(const std::string& message) {
    if (message.find('\0') == std::string::npos) return message;
    std::string out;
    for (const char c : message) {
      if (c == '\0')
        out += "\u2400";
      else
        out += c;
    }
    return out;
  }
  Status status_;
};

[[noreturn]] inline void fail(Status status, const std::string& message) { throw Error(status, message); }

inline void require(bool condition, Status status, const std::string& message) {
  if (!condition) fail(status, message);
}

}  // namespace strata
