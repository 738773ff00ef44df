// `strata-moe dequant`: raw blocks of one format to f32, or one GGUF tensor to a .npy file.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common/bytes.hpp"
#include "common/error.hpp"
#include "formats/registry.hpp"
#include "gguf/block_plan.hpp"
#include "gguf/gguf.hpp"
#include "io/files.hpp"
#include "io/npy.hpp"

namespace strata::cli {

namespace {

struct DequantOptions {
  std::string type;
  std::string blocks;
  std::string gguf;
  std::string tensor;
  std::string out;
};

// Values decoded per write: bounds the buffer whatever the tensor's size.
constexpr size_t kChunkValues = size_t{1} << 20;

std::string known_formats() {
  std::string names;
  for (const FormatInfo& f : block_formats())
    names += fmt::format("{}{}", names.empty() ? "" : ", ", f.name);
  return names;
}

int dequant_blocks(const DequantOptions& o) {
  const FormatInfo* format = find_block_format(std::string_view(o.type));
  if (format == nullptr)
    fail(Status::kInvalidArgument,
         fmt::format("--type '{}': not a block format strata-moe decodes (known: {})", o.type,
                     known_formats()));
  io::OutputSet outputs({{"--blocks", o.blocks}});
  io::Output& out = outputs.add("--out", o.out);
  const io::InputFile raw = io::InputFile::open(o.blocks, "--blocks");
  const auto block_bytes = static_cast<uint64_t>(format->block_bytes);
  // The size is checked before a byte is read: the blocks are streamed, never held whole.
  if (raw.size_bytes() == 0 || raw.size_bytes() % block_bytes != 0)
    fail(Status::kInvalidArgument,
         fmt::format("--blocks '{}': {} bytes is not a whole, non-zero number of {}-byte {} blocks",
                     o.blocks, raw.size_bytes(), block_bytes, format->name));
  const uint64_t n_blocks = raw.size_bytes() / block_bytes;
  const uint64_t blocks_per_chunk =
      std::min<uint64_t>(n_blocks, std::max<uint64_t>(1, kChunkValues / format->block_values));
  std::vector<uint8_t> chunk(static_cast<size_t>(blocks_per_chunk * block_bytes));
  std::vector<float> values(static_cast<size_t>(blocks_per_chunk * format->block_values));
  for (uint64_t first = 0; first < n_blocks; first += blocks_per_chunk) {
    const uint64_t count = std::min(blocks_per_chunk, n_blocks - first);
    raw.read_at(first * block_bytes, chunk.data(), static_cast<size_t>(count * block_bytes));
    for (uint64_t b = 0; b < count; ++b)
      format->decode(chunk.data() + b * block_bytes, values.data() + b * format->block_values);
    out.write(values.data(), static_cast<size_t>(count * format->block_values) * sizeof(float));
  }
  outputs.commit();
  return 0;
}

// Decodes values [first, first + count) of a tensor into `out`. Block formats are decoded whole
// blocks at a time, so `first` and `count` are multiples of the block size.
using Decoder = void (*)(const FormatInfo* format, const uint8_t* data, size_t first, size_t count,
                         float* out);

void decode_f32(const FormatInfo*, const uint8_t* data, size_t first, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) out[i] = bits_to_float(load_u32le(data + 4 * (first + i)));
}
void decode_f16(const FormatInfo*, const uint8_t* data, size_t first, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) out[i] = load_fp16le(data + 2 * (first + i));
}
void decode_bf16(const FormatInfo*, const uint8_t* data, size_t first, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i)
    out[i] = bf16_bits_to_float(load_u16le(data + 2 * (first + i)));
}
void decode_blocks(const FormatInfo* format, const uint8_t* data, size_t first, size_t count,
                   float* out) {
  const auto values = static_cast<size_t>(format->block_values);
  const auto bytes = static_cast<size_t>(format->block_bytes);
  for (size_t v = 0; v < count; v += values)
    format->decode(data + (first + v) / values * bytes, out + v);
}

int dequant_tensor(const DequantOptions& o) {
  // Before the input is mapped: an output over it would truncate the mapping under the reader.
  io::OutputSet outputs({{"--gguf", o.gguf}});
  io::Output& out = outputs.add("--out", o.out);
  // A split model's tensors are found in whichever of its shards holds them.
  const gguf::Model model = gguf::Model::open(o.gguf, "--gguf");
  const gguf::TensorInfo* t = model.find_tensor(o.tensor);
  if (t == nullptr) {
    size_t tensors = 0;
    for (const auto& file : model.files()) tensors += file->tensors().size();
    fail(Status::kInvalidArgument,
         fmt::format("--tensor '{}': no such tensor in '{}' ({} tensors{})", o.tensor, o.gguf,
                     tensors, model.files().size() > 1 ? " in its shards" : ""));
  }

  const FormatInfo* format = find_block_format(t->type);
  Decoder decoder = nullptr;
  size_t step = kChunkValues;
  if (t->type == GgmlType::F32)
    decoder = &decode_f32;
  else if (t->type == GgmlType::F16)
    decoder = &decode_f16;
  else if (t->type == GgmlType::BF16)
    decoder = &decode_bf16;
  else if (format != nullptr) {
    decoder = &decode_blocks;
    step = kChunkValues / format->block_values * format->block_values;
  } else {
    fail(Status::kUnsupported,
         fmt::format("tensor '{}': type {} cannot be dequantised by strata-moe (block "
                     "formats: {}; also f32, f16, bf16)",
                     t->name, ggml_type_name(t->type), known_formats()));
  }

  // The reader checked that the element count fits int64 and the data lies inside the file.
  size_t elems = 1;
  for (int64_t n : t->ne) elems *= static_cast<size_t>(n);
  const std::vector<int64_t> shape(t->ne.rbegin(), t->ne.rend());  // numpy's C order: slowest first

  const std::string head = npy::header(npy::DType::F32, shape);
  out.write(head.data(), head.size());
  std::vector<float> buffer(std::min(elems, step));
  for (size_t first = 0; first < elems; first += step) {
    const size_t count = std::min(step, elems - first);
    decoder(format, t->data, first, count, buffer.data());
    out.write(buffer.data(), count * sizeof(float));
  }
  outputs.commit();
  return 0;
}

}  // namespace

Runner add_dequant_command(CLI::App& app) {
  auto o = std::make_shared<DequantOptions>();
  CLI::App* sub = app.add_subcommand(
      "dequant", "Decode raw blocks (--type/--blocks) or a GGUF tensor (--gguf/--tensor) to f32");
  sub->add_option("--type", o->type, "Block format of --blocks, e.g. iq3_s (case-insensitive)");
  sub->add_option("--blocks", o->blocks, "File of raw blocks");
  sub->add_option("--gguf", o->gguf, "GGUF model file");
  sub->add_option("--tensor", o->tensor, "Tensor name in --gguf");
  sub->add_option("--out", o->out, "Output: raw little-endian f32 (--blocks) or .npy (--tensor)")
      ->required();
  return [o]() -> int {
    const bool raw_mode = !o->type.empty() || !o->blocks.empty();
    const bool gguf_mode = !o->gguf.empty() || !o->tensor.empty();
    if (raw_mode == gguf_mode)
      fail(Status::kInvalidArgument,
           "dequant: give either --type and --blocks, or --gguf and --tensor");
    if (raw_mode) {
      require(!o->type.empty(), Status::kInvalidArgument, "dequant: --blocks needs --type");
      require(!o->blocks.empty(), Status::kInvalidArgument, "dequant: --type needs --blocks");
      return dequant_blocks(*o);
    }
    require(!o->gguf.empty(), Status::kInvalidArgument, "dequant: --tensor needs --gguf");
    require(!o->tensor.empty(), Status::kInvalidArgument, "dequant: --gguf needs --tensor");
    return dequant_tensor(*o);
  };
}

}  // namespace strata::cli
