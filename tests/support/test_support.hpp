// Helpers shared by the tests: data paths, seeded random inputs, error metrics.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace strata::test {

// Root of tests/data (vectors/decode, vectors/moe).
std::filesystem::path data_dir();
std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path);

// A fresh seed per call (mixes a process-wide counter with the test's name), printed by the
// caller on failure so a case can be replayed.
uint64_t fresh_seed(const std::string& salt);

}  // namespace strata::test
