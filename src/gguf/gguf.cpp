// GGUF parsing: header, metadata, tensor infos, data section; and the File's mmap lifetime.
#include "gguf/gguf.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "common/error.hpp"
#include "gguf/reader.hpp"
#include "io/files.hpp"

namespace strata::gguf {

namespace {

constexpr uint32_t kMagic = 0x46554747u;  // "GGUF" read as a little-endian u32
constexpr uint64_t kDefaultAlignment = 32;
constexpr int kMaxDims = 4;
// Arrays of arrays are legal; the cap keeps the recursion (and the fuzzer's stack) bounded.
constexpr int kMaxArrayDepth = 8;
// The fewest bytes one key/value or tensor info can occupy; counts are checked against them
// before anything is reserved, so a forged count cannot size an allocation.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;                  // key length, 1-byte key, type, u8
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;  // name, n_dims, ne0, type, offset
// A parsed value takes ~50 bytes of memory for each byte of a u8 array element, so the byte
// checks alone would let a damaged multi-GB file ask for hundreds of GB. Real models hold well
// under a million metadata values and tensors.
constexpr uint64_t kMaxMetaValues = uint64_t{1} << 24;
constexpr uint64_t kMaxTensors = uint64_t{1} << 24;
// Vectors are reserved up to this many entries from a count; beyond it they grow as parsed.
constexpr uint64_t kMaxReserve = 4096;

std::string_view value_type_name(uint32_t type) {
  return gguf::value_type_name(static_cast<ValueType>(type));
}

bool is_integer_type(ValueType type) {
  switch (type) {
    case ValueType::U8:
    case ValueType::I8:
    case ValueType::U16:
    case ValueType::I16:
    case ValueType::U32:
    case ValueType::I32:
    case ValueType::U64:
    case ValueType::I64:
      return true;
    default:
      return false;
  }
}

// Keys whose meaning the GGUF specification fixes: a value of another type is damage, not an
// absent key (a reader that skipped it would silently fall back to defaults).
struct KnownKey {
  std::string_view key;
  bool integer;  // else a string
};
constexpr KnownKey kKnownKeys[] = {
    {"general.architecture", false}, {"general.name", false},
    {"general.alignment", true},     {"general.quantization_version", true},
    {"general.file_type", true},
};

// Bytes of one scalar of `type`; 0 for string and array (variable length).
uint64_t scalar_bytes(ValueType type) {
  switch (type) {
    case ValueType::U8:
    case ValueType::I8:
    case ValueType::BOOL:
      return 1;
    case ValueType::U16:
    case ValueType::I16:
      return 2;
    case ValueType::U32:
    case ValueType::I32:
    case ValueType::F32:
      return 4;
    case ValueType::U64:
    case ValueType::I64:
    case ValueType::F64:
      return 8;
    case ValueType::STRING:
    case ValueType::ARRAY:
      return 0;
  }
  return 0;
}

// Fewest bytes an element of `type` occupies inside an array.
uint64_t min_element_bytes(ValueType type) {
  if (type == ValueType::STRING) return 8;     // length field
  if (type == ValueType::ARRAY) return 4 + 8;  // element type + count
  return scalar_bytes(type);
}

class Parser {
 public:
  explicit Parser(Reader& reader) : in_(reader) {}

  MetaValue value(ValueType type, const std::string& key, int depth) {
    if (++values_ > kMaxMetaValues)
      in_.bad(fmt::format("key '{}': metadata holds more than {} values", key, kMaxMetaValues));
    MetaValue v;
    v.type = type;
    switch (type) {
      case ValueType::U8:
        v.value = uint64_t{in_.u8(key)};
        break;
      case ValueType::I8:
        v.value = int64_t{static_cast<int8_t>(in_.u8(key))};
        break;
      case ValueType::U16:
        v.value = uint64_t{in_.u16(key)};
        break;
      case ValueType::I16:
        v.value = int64_t{static_cast<int16_t>(in_.u16(key))};
        break;
      case ValueType::U32:
        v.value = uint64_t{in_.u32(key)};
        break;
      case ValueType::I32:
        v.value = int64_t{static_cast<int32_t>(in_.u32(key))};
        break;
      case ValueType::U64:
        v.value = in_.u64(key);
        break;
      case ValueType::I64:
        v.value = static_cast<int64_t>(in_.u64(key));
        break;
      case ValueType::F32:
        v.value = double{in_.f32(key)};
        break;
      case ValueType::F64:
        v.value = in_.f64(key);
        break;
      case ValueType::BOOL: {
        const uint8_t b = in_.u8(key);
        if (b > 1) in_.bad(fmt::format("key '{}': bool value {} is neither 0 nor 1", key, b));
        v.value = b == 1;
        break;
      }
      case ValueType::STRING:
        v.value = in_.string(key, "string value");
        break;
      case ValueType::ARRAY:
        v.value = array(key, depth + 1);
        break;
    }
    return v;
  }

  ValueType value_type(const std::string& key) {
    const uint32_t raw = in_.u32(key);
    if (raw > static_cast<uint32_t>(ValueType::F64))
      in_.bad(fmt::format("key '{}': unknown value type {}", key, raw));
    return static_cast<ValueType>(raw);
  }

 private:
  MetaArray array(const std::string& key, int depth) {
    if (depth > kMaxArrayDepth)
      in_.bad(fmt::format("key '{}': arrays nested deeper than {} levels", key, kMaxArrayDepth));
    MetaArray a;
    a.element_type = value_type(key);
    const uint64_t count = in_.u64(key);
    const uint64_t need = min_element_bytes(a.element_type);
    if (need != 0 && count > in_.remaining() / need)
      in_.bad(
          fmt::format("key '{}': array of {} {} elements needs at least {} bytes per element, "
                      "{} bytes left",
                      key, count, value_type_name(static_cast<uint32_t>(a.element_type)), need,
                      in_.remaining()));
    a.values.reserve(static_cast<size_t>(std::min(count, kMaxReserve)));
    for (uint64_t i = 0; i < count; ++i) a.values.push_back(value(a.element_type, key, depth));
    return a;
  }

  Reader& in_;
  uint64_t values_ = 0;
};

// Overflow-checked a * b for non-negative values.
bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

}  // namespace

std::string_view value_type_name(ValueType type) {
  static constexpr std::string_view kNames[] = {"u8",  "i8",  "u16",  "i16",    "u32",
                                                "i32", "f32", "bool", "string", "array",
                                                "u64", "i64", "f64"};
  const auto index = static_cast<uint32_t>(type);
  return index < std::size(kNames) ? kNames[index] : std::string_view("unknown");
}

std::optional<int64_t> MetaValue::as_int() const {
  if (const auto* u = std::get_if<uint64_t>(&value)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* b = std::get_if<bool>(&value)) return *b ? 1 : 0;
  return std::nullopt;
}

std::optional<std::string> MetaValue::as_string() const {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return std::nullopt;
}

struct File::Impl {
  std::string label;
  void* mapping = nullptr;  // owned when non-null
  size_t mapping_bytes = 0;
  std::span<const uint8_t> bytes;

  uint32_t version = 0;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0;
  std::vector<std::pair<std::string, MetaValue>> metadata;
  std::unordered_map<std::string, size_t> key_index;
  std::vector<TensorInfo> tensors;
  std::unordered_map<std::string, size_t> tensor_index;

  ~Impl() {
    if (mapping != nullptr) ::munmap(mapping, mapping_bytes);
  }

  void parse();
  void parse_metadata(Reader& in, uint64_t kv_count);
  void parse_tensor_infos(Reader& in, uint64_t tensor_count);
  void place_tensors();
};

void File::Impl::parse() {
  Reader in(bytes, label);
  if (bytes.size() < 4) in.bad(fmt::format("{} bytes is too short for a GGUF file", bytes.size()));
  const uint32_t magic = in.u32("magic");
  if (magic != kMagic)
    in.bad(fmt::format("not a GGUF file (magic {:02x} {:02x} {:02x} {:02x}, expected 'GGUF')",
                       bytes[0], bytes[1], bytes[2], bytes[3]));
  version = in.u32("version");
  if (version == 1)
    in.bad("GGUF version 1 (32-bit counts) is not supported; re-save the model as version 2 or 3");
  if (version != 2 && version != 3) {
    // A big-endian GGUF has its version bytes reversed; say so rather than "version 50331648".
    const bool byte_swapped = (version & 0xFFFFu) == 0 && __builtin_bswap32(version) <= 3;
    in.bad(fmt::format("unsupported GGUF version {}{}", version,
                       byte_swapped ? " (a big-endian file?)" : ""));
  }
  const uint64_t tensor_count = in.u64("tensor count");
  const uint64_t kv_count = in.u64("metadata key/value count");
  if (kv_count > in.remaining() / kMinKvBytes)
    in.bad(fmt::format("metadata key/value count {} cannot fit in the {} bytes left", kv_count,
                       in.remaining()));
  if (tensor_count > in.remaining() / kMinTensorInfoBytes)
    in.bad(fmt::format("tensor count {} cannot fit in the {} bytes left", tensor_count,
                       in.remaining()));
  if (tensor_count > kMaxTensors)
    in.bad(fmt::format("tensor count {} is more than the {} the reader accepts", tensor_count,
                       kMaxTensors));
  parse_metadata(in, kv_count);
  parse_tensor_infos(in, tensor_count);

  // The data section starts at the first multiple of the alignment after the tensor infos.
  const uint64_t header_end = in.position();
  const uint64_t padded = (header_end + alignment - 1) / alignment * alignment;
  if (padded < header_end || (tensor_count > 0 && padded > bytes.size()))
    in.bad(
        fmt::format("data section (at offset {}, alignment {}) starts past the end of the file "
                    "({} bytes)",
                    padded, alignment, bytes.size()));
  data_offset = padded;
  place_tensors();
}

void File::Impl::parse_metadata(Reader& in, uint64_t kv_count) {
  metadata.reserve(static_cast<size_t>(std::min(kv_count, kMaxReserve)));
  Parser parser(in);
  for (uint64_t i = 0; i < kv_count; ++i) {
    const std::string where = fmt::format("metadata key #{}", i);
    std::string key = in.string(where, "key");
    if (key.empty()) in.bad(fmt::format("{}: empty key", where));
    if (key_index.contains(key)) in.bad(fmt::format("key '{}': duplicate key", key));
    const ValueType type = parser.value_type(key);
    MetaValue value = parser.value(type, key, 0);
    key_index.emplace(key, metadata.size());
    metadata.emplace_back(std::move(key), std::move(value));
  }
  for (const KnownKey& known : kKnownKeys) {
    const auto it = key_index.find(std::string(known.key));
    if (it == key_index.end()) continue;
    const ValueType type = metadata[it->second].second.type;
    if (known.integer ? !is_integer_type(type) : type != ValueType::STRING)
      in.bad(fmt::format("key '{}': value type {}, expected {}", known.key,
                         value_type_name(static_cast<uint32_t>(type)),
                         known.integer ? "an integer" : "string"));
  }
  if (const auto it = key_index.find("general.alignment"); it != key_index.end()) {
    const MetaValue& v = metadata[it->second].second;
    const auto a = v.as_int();
    if (!a)
      in.bad(fmt::format("key 'general.alignment': {} does not fit int64",
                         std::get<uint64_t>(v.value)));
    if (*a <= 0 || (*a & (*a - 1)) != 0)
      in.bad(fmt::format("key 'general.alignment': {} is not a non-zero power of two", *a));
    alignment = static_cast<uint64_t>(*a);
  }
}

void File::Impl::parse_tensor_infos(Reader& in, uint64_t tensor_count) {
  tensors.reserve(static_cast<size_t>(std::min(tensor_count, kMaxReserve)));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    TensorInfo t;
    t.name = in.string(fmt::format("tensor #{}", i), "name");
    if (t.name.empty()) in.bad(fmt::format("tensor #{}: empty name", i));
    const std::string where = fmt::format("tensor '{}'", t.name);
    if (tensor_index.contains(t.name)) in.bad(fmt::format("{}: duplicate tensor name", where));
    const uint32_t n_dims = in.u32(where);
    if (n_dims < 1 || n_dims > kMaxDims)
      in.bad(fmt::format("{}: {} dimensions (1 to {} allowed)", where, n_dims, kMaxDims));
    uint64_t elems = 1;
    for (uint32_t j = 0; j < n_dims; ++j) {
      const uint64_t raw = in.u64(where);
      if (raw > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        in.bad(fmt::format("{}: ne[{}] = {} is negative", where, j, static_cast<int64_t>(raw)));
      if (mul_overflows(elems, raw, &elems) ||
          elems > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        in.bad(fmt::format("{}: element count overflows int64 at ne[{}] = {}", where, j, raw));
      t.ne.push_back(static_cast<int64_t>(raw));
    }
    const uint32_t type_id = in.u32(where);
    const auto info = ggml_type_info(type_id);
    if (!info) in.bad(fmt::format("{}: unknown ggml type id {}", where, type_id));
    t.type = info->type;
    t.offset = in.u64(where);
    if (t.ne[0] % info->block_values != 0)
      in.bad(fmt::format("{}: ne[0] = {} is not a multiple of {}'s block of {} values", where,
                         t.ne[0], info->name, info->block_values));
    // elems fits int64 and is a multiple of block_values, so only the byte product can overflow.
    const uint64_t blocks = elems / info->block_values;
    if (mul_overflows(blocks, info->block_bytes, &t.bytes))
      in.bad(fmt::format("{}: size in bytes overflows 64 bits", where));
    tensor_index.emplace(t.name, tensors.size());
    tensors.push_back(std::move(t));
  }
}

void File::Impl::place_tensors() {
  const uint64_t data_bytes = data_offset <= bytes.size() ? bytes.size() - data_offset : 0;
  for (TensorInfo& t : tensors) {
    if (t.offset % alignment != 0)
      fail(Status::kBadFile, fmt::format("{}: tensor '{}': data offset {} is not a multiple of the "
                                         "alignment {}",
                                         label, t.name, t.offset, alignment));
    if (t.offset > data_bytes || t.bytes > data_bytes - t.offset)
      fail(Status::kBadFile,
           fmt::format("{}: tensor '{}': data ({} bytes at data offset {}) runs past the end of "
                       "the file ({} bytes of tensor data)",
                       label, t.name, t.bytes, t.offset, data_bytes));
    t.data = bytes.data() + data_offset + t.offset;
  }
  // Two tensors sharing bytes would read each other's data as their own without complaint.
  std::vector<const TensorInfo*> by_offset;
  by_offset.reserve(tensors.size());
  for (const TensorInfo& t : tensors)
    if (t.bytes > 0) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->offset != b->offset ? a->offset < b->offset : a->bytes < b->bytes;
  });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& before = *by_offset[i - 1];
    const TensorInfo& after = *by_offset[i];
    if (after.offset < before.offset + before.bytes)
      fail(Status::kBadFile,
           fmt::format("{}: tensor '{}' (data offset {}, {} bytes) overlaps tensor '{}' (data "
                       "offset {}, {} bytes)",
                       label, after.name, after.offset, after.bytes, before.name, before.offset,
                       before.bytes));
  }
}

File::File(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

File File::parse(std::span<const uint8_t> bytes, std::string label) {
  auto impl = std::make_unique<Impl>();
  impl->label = std::move(label);
  impl->bytes = bytes;
  impl->parse();
  return File(std::move(impl));
}

File File::open(const std::filesystem::path& path, std::string_view option) {
  const io::InputFile input = io::InputFile::open(path, option);
  const auto size = static_cast<size_t>(input.size_bytes());
  auto impl = std::make_unique<Impl>();
  impl->label = path.string();
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, input.fd(), 0);
    if (p == MAP_FAILED)
      fail(Status::kIo, fmt::format("{}: cannot mmap: {}", input.label(), std::strerror(errno)));
    impl->mapping = p;
    impl->mapping_bytes = size;
    impl->bytes = std::span<const uint8_t>(static_cast<const uint8_t*>(p), size);
  }  // an empty file cannot be mapped; parse() reports it as too short
  impl->parse();
  return File(std::move(impl));
}

uint32_t File::version() const {
  return impl_->version;
}
uint64_t File::alignment() const {
  return impl_->alignment;
}
uint64_t File::data_offset() const {
  return impl_->data_offset;
}
const std::vector<std::pair<std::string, MetaValue>>& File::metadata() const {
  return impl_->metadata;
}
const std::vector<TensorInfo>& File::tensors() const {
  return impl_->tensors;
}
const std::string& File::path() const {
  return impl_->label;
}

const MetaValue* File::find(std::string_view key) const {
  const auto it = impl_->key_index.find(std::string(key));
  return it == impl_->key_index.end() ? nullptr : &impl_->metadata[it->second].second;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  const auto it = impl_->tensor_index.find(std::string(name));
  return it == impl_->tensor_index.end() ? nullptr : &impl_->tensors[it->second];
}

std::string File::architecture() const {
  const MetaValue* v = find("general.architecture");
  if (v == nullptr) return "";
  return v->as_string().value_or("");
}

}  // namespace strata::gguf
