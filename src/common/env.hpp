// Run-time switches from the environment (STRATA_PF_FUSED, ...) and the once-per-process notices
// an arm prints when it falls back.
#pragma once
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace strata {

// True when the variable `name` is set to exactly `value`.
inline bool env_equals(const char* name, const char* value) {
  const char* set = std::getenv(name);
  return set != nullptr && std::strcmp(set, value) == 0;
}

// Prints "strata-moe: <message>" on stderr the first time `said` is raised in this process.
inline void say_once(std::atomic<bool>& said, const std::string& message) {
  if (!said.exchange(true)) std::fprintf(stderr, "strata-moe: %s\n", message.c_str());
}

}  // namespace strata
