// NumPy .npy files (format 1.0/2.0/3.0, C order, little-endian): f32, i32 read and write.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace strata::io {
class Output;
}

namespace strata::npy {

enum class DType { F32, I32 };

struct Array {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // raw element data, little-endian, C order

  int64_t size() const;  // product of shape
  const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
  const int32_t* i32() const { return reinterpret_cast<const int32_t*>(bytes.data()); }
};

// Called with the header's dtype and shape before the data is allocated or read; it throws to
// refuse them (an array too large for the command is refused before it costs memory).
using ShapeCheck = std::function<void(DType, const std::vector<int64_t>& shape)>;

// Throws strata::Error(kBadFile) naming `what` (e.g. "--x") for a damaged or unsupported file
// (wrong magic, big-endian or Fortran order, other dtypes, size mismatch).
// Anything but a regular file is refused before it is opened (a FIFO cannot block).
Array read(const std::filesystem::path& path, const std::string& what,
           const ShapeCheck& check = {});
// The same checks on an in-memory image (the fuzzer's entry); `what` names it in messages.
Array parse(std::span<const uint8_t> bytes, const std::string& what);
// Written to a temporary file next to `path` and renamed into place once complete.
void write(const std::filesystem::path& path, DType dtype, const std::vector<int64_t>& shape,
           const void* data);
// Into an output of an io::OutputSet (committed with the command's other outputs).
void write(io::Output& out, DType dtype, const std::vector<int64_t>& shape, const void* data);
// The bytes before the data of a .npy file of this dtype and shape (magic, version, padded
// header dict), for writers that stream the data themselves.
std::string header(DType dtype, const std::vector<int64_t>& shape);

}  // namespace strata::npy
