#include "io/npy.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

#include "common/alloc.hpp"
#include "common/error.hpp"
#include "io/files.hpp"

namespace strata::npy {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
// Real headers are a few hundred bytes; this bounds the allocation a forged length could ask for.
constexpr uint64_t kMaxHeaderBytes = 1 << 20;
constexpr size_t kMaxDims = 32;  // numpy's own limit

struct Header {
  std::optional<DType> dtype;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
};

// Parses the header's Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape':
// (3, 4), }
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  Header parse() {
    Header h;
    expect('{');
    while (!peek('}')) {
      const std::string key = string_literal();
      expect(':');
      if ((key == "descr" && h.dtype) || (key == "fortran_order" && h.fortran_order) ||
          (key == "shape" && h.shape))
        bad(fmt::format("header key '{}' is repeated", key));
      if (key == "descr") {
        const std::string descr = string_literal();
        if (descr == "<f4")
          h.dtype = DType::F32;
        else if (descr == "<i4")
          h.dtype = DType::I32;
        else
          bad(fmt::format("dtype '{}' is not supported (only '<f4' and '<i4')", descr));
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
      } else if (key == "shape") {
        h.shape = tuple();
      } else {
        bad(fmt::format("unexpected header key '{}'", key));
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip_space();
    if (pos_ != text_.size()) bad("trailing characters after the header dict");
    if (!h.dtype || !h.fortran_order || !h.shape)
      bad("header lacks one of 'descr', 'fortran_order', 'shape'");
    if (*h.fortran_order) bad("Fortran-order arrays are not supported (save with C order)");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& reason) const {
    fail(Status::kBadFile, fmt::format("{}: bad .npy header: {}", what_, reason));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) bad(fmt::format("expected '{}' at character {}", c, pos_));
    ++pos_;
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      bad(fmt::format("expected a quoted string at character {}", pos_));
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] :
         {std::pair{std::string_view("True"), true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    bad(fmt::format("expected True or False at character {}", pos_));
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    while (!peek(')')) {
      if (dims.size() == kMaxDims) bad(fmt::format("more than {} dimensions", kMaxDims));
      int64_t n = 0;
      size_t digits = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        const int digit = text_[pos_++] - '0';
        if (n > (std::numeric_limits<int64_t>::max() - digit) / 10)
          bad("shape dimension overflows");
        n = n * 10 + digit;
        ++digits;
      }
      if (digits == 0) bad(fmt::format("expected a dimension at character {}", pos_));
      dims.push_back(n);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return dims;
  }

  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;
};

std::string header_dict(DType dtype, const std::vector<int64_t>& shape) {
  std::string dims;
  for (int64_t n : shape) dims += fmt::format("{}, ", n);
  if (shape.size() > 1)
    dims.resize(dims.size() - 2);  // "(5,)" keeps its comma, "(2, 3)" does not
  else if (shape.size() == 1)
    dims.resize(dims.size() - 1);
  return fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                     dtype == DType::F32 ? "<f4" : "<i4", dims);
}

}  // namespace

int64_t Array::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

// Where the parser takes its bytes from: a file (read) or memory (parse).
using ReadAt = std::function<void(uint64_t offset, void* out, size_t bytes)>;

// `label` names the file in messages ("--x: 'x.npy'").
Array parse_from(uint64_t file_bytes, const ReadAt& read_at, const std::string& label,
                 const ShapeCheck& check = {}) {
  const auto bad = [&](const std::string& reason) {
    fail(Status::kBadFile, fmt::format("{}: {}", label, reason));
  };

  uint8_t preamble[12] = {};
  if (file_bytes < 10) bad(fmt::format("{} bytes is too short for a .npy file", file_bytes));
  read_at(0, preamble, 10);
  if (std::memcmp(preamble, kMagic, kMagicBytes) != 0) bad("not a .npy file (bad magic)");
  const uint8_t major = preamble[6];
  uint64_t header_bytes = 0;
  uint64_t header_start = 10;
  if (major == 1) {
    header_bytes = static_cast<uint64_t>(preamble[8]) | (static_cast<uint64_t>(preamble[9]) << 8);
  } else if (major == 2 || major == 3) {
    if (file_bytes < 12) bad("truncated in the header length");
    read_at(10, preamble + 10, 2);
    header_bytes = 0;
    for (int i = 0; i < 4; ++i) header_bytes |= static_cast<uint64_t>(preamble[8 + i]) << (8 * i);
    header_start = 12;
  } else {
    bad(fmt::format("unsupported .npy format version {}.{}", major, preamble[7]));
  }
  if (header_bytes > kMaxHeaderBytes || header_bytes > file_bytes - header_start)
    bad(fmt::format("header length {} runs past the end of the file ({} bytes)", header_bytes,
                    file_bytes));
  std::string text(static_cast<size_t>(header_bytes), '\0');
  read_at(header_start, text.data(), static_cast<size_t>(header_bytes));

  const Header header = DictParser(text, label).parse();
  Array array;
  array.dtype = *header.dtype;
  array.shape = *header.shape;
  uint64_t elems = 1;
  for (int64_t n : array.shape)
    if (__builtin_mul_overflow(elems, static_cast<uint64_t>(n), &elems) ||
        elems > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / 4)
      bad("shape's element count overflows");
  const uint64_t data_bytes = file_bytes - header_start - header_bytes;
  if (data_bytes != elems * 4)
    bad(fmt::format("shape ({}) needs {} data bytes, the file has {}", fmt::join(array.shape, ", "),
                    elems * 4, data_bytes));
  if (check) check(array.dtype, array.shape);
  resize_or_fail(array.bytes, static_cast<size_t>(data_bytes), label + ": array data");
  if (data_bytes > 0)  // an empty array has no buffer to read into
    read_at(header_start + header_bytes, array.bytes.data(), static_cast<size_t>(data_bytes));
  return array;
}

}  // namespace

Array read(const std::filesystem::path& path, const std::string& what, const ShapeCheck& check) {
  const io::InputFile file = io::InputFile::open(path, what);
  return parse_from(
      file.size_bytes(),
      [&](uint64_t offset, void* out, size_t bytes) { file.read_at(offset, out, bytes); },
      fmt::format("{}: '{}'", what, path.string()), check);
}

Array parse(std::span<const uint8_t> bytes, const std::string& what) {
  return parse_from(
      bytes.size(),
      [&](uint64_t offset, void* out, size_t n) {
        // parse_from checks every range against the size first; this is the last line of defence.
        require(offset <= bytes.size() && n <= bytes.size() - offset, Status::kInternal,
                fmt::format("{}: read past the end", what));
        std::memcpy(out, bytes.data() + offset, n);
      },
      what);
}

std::string header(DType dtype, const std::vector<int64_t>& shape) {
  std::string dict = header_dict(dtype, shape);
  // Version 1.0 while the header length fits 16 bits; the whole preamble is padded to 64 bytes.
  const bool v1 = dict.size() + 1 + 10 <= 0xFFFF;
  const size_t preamble = v1 ? 10 : 12;
  const size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - preamble - dict.size() - 1, ' ');
  dict.push_back('\n');

  std::string head(kMagic, kMagicBytes);
  head.push_back(static_cast<char>(v1 ? 1 : 2));
  head.push_back(0);
  const uint64_t n = dict.size();
  for (size_t i = 0; i < preamble - 8; ++i)
    head.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  return head + dict;
}

void write(io::Output& out, DType dtype, const std::vector<int64_t>& shape, const void* data) {
  uint64_t elems = 1;
  for (int64_t n : shape) {
    require(n >= 0, Status::kInvalidArgument,
            fmt::format("npy::write {}: negative dimension {}", out.label(), n));
    require(!__builtin_mul_overflow(elems, static_cast<uint64_t>(n), &elems) &&
                elems <= std::numeric_limits<uint64_t>::max() / 4,
            Status::kInvalidArgument,
            fmt::format("npy::write {}: element count overflows", out.label()));
  }
  require(data != nullptr || elems == 0, Status::kInvalidArgument,
          fmt::format("npy::write {}: no data", out.label()));
  const std::string head = header(dtype, shape);
  out.write(head.data(), head.size());
  out.write(data, static_cast<size_t>(elems * 4));
}

void write(const std::filesystem::path& path, DType dtype, const std::vector<int64_t>& shape,
           const void* data) {
  io::OutputSet outputs({});
  write(outputs.add("npy::write", path), dtype, shape, data);
  outputs.commit();
}

}  // namespace strata::npy
