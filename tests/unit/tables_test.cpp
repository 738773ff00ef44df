// The generated tables header matches data/tables/*.txt value for value.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "formats/tables.hpp"
#include "test_support.hpp"

namespace {

std::vector<unsigned long long> read_table(const std::string& stem) {
  std::ifstream in(strata::test::data_dir().parent_path().parent_path() / "data" / "tables" / (stem + ".txt"));
  EXPECT_TRUE(in.good()) << stem;
  std::vector<unsigned long long> values;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    values.push_back(line[0] == '-' ? static_cast<unsigned long long>(std::stoll(line)) : std::stoull(line, nullptr, 0));
  }
  return values;
}

template <class T, size_t N>
void expect_table(const std::string& stem, const T (&table)[N]) {
  const auto expected = read_table(stem);
  ASSERT_EQ(expected.size(), N) << stem;
  for (size_t i = 0; i < N; ++i)
    ASSERT_EQ(static_cast<T>(expected[i]), table[i]) << stem << "[" << i << "]";
}

}  // namespace

TEST(Tables, GeneratedHeaderMatchesTextFiles) {
  using namespace strata::tables;
  expect_table("iq3s_grid", host_iq3s_grid);
  expect_table("iq3xxs_grid", host_iq3xxs_grid);
  expect_table("iq2xxs_grid", host_iq2xxs_grid);
  expect_table("iq2xs_grid", host_iq2xs_grid);
  expect_table("iq2s_grid", host_iq2s_grid);
  expect_table("iq1s_grid", host_iq1s_grid);
  expect_table("iq1s_grid_gpu", host_iq1s_grid_gpu);
  expect_table("ksigns_iq2xs", host_ksigns_iq2xs);
  expect_table("kmask_iq2xs", host_kmask_iq2xs);
  expect_table("kvalues_iq4nl", host_kvalues_iq4nl);
  expect_table("kvalues_mxfp4", host_kvalues_mxfp4);
}
