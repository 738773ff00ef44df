// Bounds-checked little-endian cursor over a GGUF image. Every read checks the bytes left first
// and throws Error(kBadFile) naming the file, the field and the offset.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "common/error.hpp"

namespace strata::gguf {

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, std::string_view label) : bytes_(bytes), label_(label) {}

  uint64_t position() const { return pos_; }
  uint64_t remaining() const { return bytes_.size() - pos_; }

  [[noreturn]] void bad(const std::string& reason) const {
    fail(Status::kBadFile, fmt::format("{}: {}", label_, reason));
  }

  uint8_t u8(std::string_view what) { return *take(1, what); }
  uint16_t u16(std::string_view what) { return load_u16le(take(2, what)); }
  uint32_t u32(std::string_view what) { return load_u32le(take(4, what)); }
  uint64_t u64(std::string_view what) {
    const uint8_t* p = take(8, what);
    return static_cast<uint64_t>(load_u32le(p)) | (static_cast<uint64_t>(load_u32le(p + 4)) << 32);
  }
  float f32(std::string_view what) { return bits_to_float(u32(what)); }
  double f64(std::string_view what) {
    const uint64_t bits = u64(what);
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }

  // A GGUF string: u64 length, then that many bytes (no terminator). The length is checked
  // against the bytes left before the string is allocated.
  std::string string(std::string_view what, std::string_view field) {
    const uint64_t length = u64(what);
    if (length > remaining())
      bad(fmt::format("{}: {} length {} runs past the end of the file ({} bytes left)", what, field,
                      length, remaining()));
    const uint8_t* p = take(static_cast<size_t>(length), what);
    return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(length));
  }

 private:
  const uint8_t* take(size_t n, std::string_view what) {
    if (n > remaining())
      bad(fmt::format("{}: truncated at offset {} (needs {} bytes, {} left)", what, pos_, n,
                      remaining()));
    const uint8_t* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }

  std::span<const uint8_t> bytes_;
  std::string_view label_;
  uint64_t pos_ = 0;
};

}  // namespace strata::gguf
