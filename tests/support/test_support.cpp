#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
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

namespace {

uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

// FNV-1a: std::hash of a string may differ between standard libraries; a replayed seed must not.
uint64_t hash_text(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string current_test_name() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info == nullptr ? std::string() : std::string(info->test_suite_name()) + "." + info->name();
}

struct SeedState {
  std::mutex mutex;
  uint64_t run_seed = 0;
  bool from_environment = false;
  std::string test;                          // the test the counters below belong to
  std::map<std::string, uint64_t> draws;     // per salt: seeds drawn so far in this test
  bool drew = false;                         // the current test drew a seed
};

SeedState& seed_state() {
  static SeedState* state = [] {
    auto* s = new SeedState;
    const char* text = std::getenv("STRATA_TEST_SEED");
    if (text != nullptr && *text != '\0') {
      char* end = nullptr;
      errno = 0;
      const unsigned long long value = std::strtoull(text, &end, 0);
      if (errno != 0 || end == text || *end != '\0') {
        std::fprintf(stderr, "STRATA_TEST_SEED: '%s' is not an unsigned integer\n", text);
        std::exit(2);
      }
      s->run_seed = value;
      s->from_environment = true;
    } else {
      s->run_seed = mix(static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                        (static_cast<uint64_t>(std::random_device{}()) << 32));
    }
    return s;
  }();
  return *state;
}

// After every failure of a test that drew a seed: the command that replays it.
class ReplayPrinter final : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo& info) override {
    SeedState& s = seed_state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.drew = false;
    running_ = std::string(info.test_suite_name()) + "." + info.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    SeedState& s = seed_state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.drew) return;
    // NOTE: not current_test_info() here: gtest holds its own lock while it reports a result.
    std::printf("random case: replay with STRATA_TEST_SEED=%llu --gtest_filter=%s\n",
                static_cast<unsigned long long>(s.run_seed), running_.c_str());
    std::fflush(stdout);
  }

  std::string running_;
};

// Registered before main: every test executable that draws a seed links this file.
[[maybe_unused]] const bool kReplayPrinterRegistered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new ReplayPrinter);
  return true;
}();

}  // namespace

uint64_t run_seed() { return seed_state().run_seed; }

uint64_t fresh_seed(const std::string& salt) {
  SeedState& s = seed_state();
  const std::string test = current_test_name();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (test != s.test) {
    s.test = test;
    s.draws.clear();
  }
  s.drew = true;
  const uint64_t nth = s.draws[salt]++;
  return mix(s.run_seed ^ mix(hash_text(test) ^ mix(hash_text(salt) + nth)));
}

uint64_t shared_seed(const std::string& salt) {
  SeedState& s = seed_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.drew = true;
  return mix(s.run_seed ^ mix(hash_text("shared:" + salt)));
}

}  // namespace strata::test
