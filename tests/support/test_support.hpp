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

// The seed of a random case: a function of the run's seed, the running test's full name, `salt`
// and how many seeds that test drew with that salt before, so a test draws the same seeds
// whichever tests run before it. The run's seed is fresh per process unless STRATA_TEST_SEED
// gives it; every failure of a test that drew a seed prints the STRATA_TEST_SEED and
// --gtest_filter that replay it.
uint64_t fresh_seed(const std::string& salt);
// The seed of data shared by several tests of one process (a layer built once per geometry): a
// function of the run's seed and `salt` only, so the test that happens to build it does not matter.
uint64_t shared_seed(const std::string& salt);
// The run's seed (STRATA_TEST_SEED when set).
uint64_t run_seed();

}  // namespace strata::test
