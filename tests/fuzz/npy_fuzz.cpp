// libFuzzer entry: any byte string through the .npy reader. The only acceptable failure is a
// strata::Error; a crash, a sanitizer report or another exception escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/error.hpp"
#include "io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const strata::npy::Array array =
        strata::npy::parse(std::span<const uint8_t>(data, size), "fuzz");
    // The data must be exactly what the shape says; touch its ends so a short buffer trips ASan.
    volatile uint8_t sink = 0;
    if (static_cast<uint64_t>(array.size()) * 4 != array.bytes.size()) __builtin_trap();
    if (!array.bytes.empty()) sink = sink ^ array.bytes.front() ^ array.bytes.back();
  } catch (const strata::Error&) {
  }
  return 0;
}
