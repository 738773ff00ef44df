#include "test_support.hpp"

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <stdexcept>

namespace strata::test {

std::filesystem::path data_dir() { return std::filesystem::path(STRATA_TEST_DATA_DIR); }

std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

uint64_t fresh_seed(const std::string& salt) {
  static std::atomic<uint64_t> counter{0};
  const uint64_t clock = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  uint64_t h = std::hash<std::string>{}(salt) ^ (clock * 0x9E3779B97F4A7C15ull) ^ (++counter << 32);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

}  // namespace strata::test
