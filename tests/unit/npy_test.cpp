// .npy reading and writing: the bundled vectors, round trips, and damaged files.
#include "io/npy.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>

#include "common/error.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

std::filesystem::path moe_dir() {
  return test::data_dir() / "vectors" / "moe";
}

class NpyTemp : public ::testing::Test {
 protected:
  std::filesystem::path path(const std::string& name) const {
    return std::filesystem::temp_directory_path() /
           ("strata_npy_" + std::to_string(::getpid()) + "_" + name + ".npy");
  }
  void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
    created_.push_back(p);
  }
  void TearDown() override {
    for (const auto& p : created_) std::filesystem::remove(p);
  }
  std::vector<std::filesystem::path> created_;
};

void expect_error(const std::function<void()>& fn, Status status,
                  const std::vector<std::string>& needles) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    for (const auto& needle : needles)
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << e.what() << " lacks " << needle;
  }
}

TEST(Npy, ReadsBundledVectors) {
  const npy::Array x = npy::read(moe_dir() / "layer0.x.npy", "--x");
  EXPECT_EQ(x.dtype, npy::DType::F32);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{96, 512}));
  EXPECT_EQ(x.size(), 96 * 512);
  ASSERT_EQ(x.bytes.size(), 96u * 512 * 4);
  const auto raw = test::read_file_bytes(moe_dir() / "layer0.x.npy");
  EXPECT_TRUE(
      std::equal(x.bytes.begin(), x.bytes.end(), raw.end() - static_cast<long>(x.bytes.size())));

  const npy::Array ids = npy::read(moe_dir() / "layer0.ids.npy", "--ids");
  const npy::Array w = npy::read(moe_dir() / "layer0.weights.npy", "--weights");
  EXPECT_EQ(ids.dtype, npy::DType::I32);
  EXPECT_EQ(ids.shape, (std::vector<int64_t>{96, 4}));
  EXPECT_EQ(w.shape, ids.shape);
  for (int t = 0; t < 96; ++t) {
    double sum = 0;
    for (int j = 0; j < 4; ++j) {
      EXPECT_GE(ids.i32()[t * 4 + j], 0);
      EXPECT_LT(ids.i32()[t * 4 + j], 16);
      sum += w.f32()[t * 4 + j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "token " << t;
  }
}

TEST_F(NpyTemp, WriteMatchesNumpyBytes) {
  // numpy wrote the bundled files; writing the same array back gives the same bytes.
  for (const char* name : {"layer0.x.npy", "layer1.ids.npy", "layer1.weights.npy"}) {
    const npy::Array a = npy::read(moe_dir() / name, name);
    const auto out = path("same");
    created_.push_back(out);
    npy::write(out, a.dtype, a.shape, a.bytes.data());
    EXPECT_EQ(test::read_file_bytes(out), test::read_file_bytes(moe_dir() / name)) << name;
  }
}

TEST_F(NpyTemp, RoundTripShapes) {
  const uint64_t seed = test::fresh_seed("npy round trip");
  std::mt19937 rng(static_cast<uint32_t>(seed));
  const std::vector<std::vector<int64_t>> shapes = {{},        {1},    {7},         {3, 5},
                                                    {2, 3, 4}, {0, 3}, {2, 1, 1, 9}};
  for (const auto& shape : shapes) {
    for (npy::DType dtype : {npy::DType::F32, npy::DType::I32}) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      std::vector<uint32_t> data(static_cast<size_t>(n));
      for (auto& v : data) v = rng();
      const auto p = path("rt");
      created_.push_back(p);
      npy::write(p, dtype, shape, data.data());
      EXPECT_EQ(std::filesystem::file_size(p) % 64, (static_cast<uint64_t>(n) * 4) % 64)
          << "seed " << seed;
      const npy::Array a = npy::read(p, "round trip");
      EXPECT_EQ(a.dtype, dtype);
      EXPECT_EQ(a.shape, shape);
      EXPECT_EQ(a.size(), n);
      ASSERT_EQ(a.bytes.size(), data.size() * 4);
      EXPECT_EQ(std::memcmp(a.bytes.data(), data.data(), a.bytes.size()), 0) << "seed " << seed;
    }
  }
}

std::string npy_file(const std::string& dict, const std::string& data, char major = 1) {
  std::string header = dict;
  const size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(major);
  out.push_back(0);
  for (size_t i = 0; i < preamble - 8; ++i)
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  return out + header + data;
}

TEST_F(NpyTemp, Version2Header) {
  const auto p = path("v2");
  write_bytes(p, npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
                          std::string(8, '\1'), 2));
  const npy::Array a = npy::read(p, "--ids");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(a.i32()[1], 0x01010101);
}

TEST_F(NpyTemp, DamagedFiles) {
  const std::string good_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string data(24, '\0');
  struct Case {
    std::string name;
    std::string bytes;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {"empty", "", "too short"},
      {"magic", "\x93NUMPZ" + npy_file(good_dict, data).substr(6), "magic"},
      {"version", npy_file(good_dict, data, 9), "version 9"},
      {"short_data", npy_file(good_dict, data.substr(0, 20)), "needs 24 data bytes"},
      {"long_data", npy_file(good_dict, data + "x"), "needs 24 data bytes"},
      {"fortran", npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data),
       "Fortran"},
      {"big_endian", npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", data),
       "'>f4'"},
      {"f64", npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", data), "'<f8'"},
      {"no_shape", npy_file("{'descr': '<f4', 'fortran_order': False, }", data), "lacks"},
      {"bad_shape", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", data),
       "dimension"},
      {"huge_shape",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                data),
       "overflows"},
      {"extra_key",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", data), "'x'"},
      {"unterminated", npy_file("{'descr': '<f4", data), "unterminated"},
      {"repeated_key",
       npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), 'fortran_order': False}",
                data),
       "header key 'fortran_order' is repeated"},
      {"repeated_shape",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'shape': (6,)}", data),
       "header key 'shape' is repeated"},
  };
  for (const Case& c : cases) {
    const auto p = path(c.name);
    write_bytes(p, c.bytes);
    expect_error([&] { npy::read(p, "--" + c.name); }, Status::kBadFile, {"--" + c.name, c.needle});
  }
  // A header length past the end of the file.
  std::string cut = npy_file(good_dict, data);
  cut[8] = '\xff';
  cut[9] = '\x7f';
  const auto p = path("header_len");
  write_bytes(p, cut.substr(0, 100));
  expect_error([&] { npy::read(p, "--len"); }, Status::kBadFile, {"--len", "header length"});
}

TEST_F(NpyTemp, MissingFileIsIo) {
  expect_error([&] { npy::read(path("does_not_exist"), "--x"); }, Status::kIo,
               {"--x", "does_not_exist"});
}

}  // namespace
}  // namespace strata
