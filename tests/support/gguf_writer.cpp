#include "gguf_writer.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace strata::test {

using gguf::MetaArray;
using gguf::MetaValue;
using gguf::ValueType;

void Bytes::u16(uint16_t v) {
  for (int i = 0; i < 2; ++i) data.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void Bytes::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) data.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void Bytes::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) data.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void Bytes::str(const std::string& s) {
  u64(s.size());
  data.insert(data.end(), s.begin(), s.end());
}

void encode_value(Bytes& out, const MetaValue& v) {
  const auto as_u = [&] { return std::get<uint64_t>(v.value); };
  const auto as_i = [&] { return static_cast<uint64_t>(std::get<int64_t>(v.value)); };
  switch (v.type) {
    case ValueType::U8:
      out.u8(static_cast<uint8_t>(as_u()));
      break;
    case ValueType::I8:
      out.u8(static_cast<uint8_t>(as_i()));
      break;
    case ValueType::U16:
      out.u16(static_cast<uint16_t>(as_u()));
      break;
    case ValueType::I16:
      out.u16(static_cast<uint16_t>(as_i()));
      break;
    case ValueType::U32:
      out.u32(static_cast<uint32_t>(as_u()));
      break;
    case ValueType::I32:
      out.u32(static_cast<uint32_t>(as_i()));
      break;
    case ValueType::U64:
      out.u64(as_u());
      break;
    case ValueType::I64:
      out.u64(as_i());
      break;
    case ValueType::F32: {
      const float f = static_cast<float>(std::get<double>(v.value));
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      out.u32(bits);
      break;
    }
    case ValueType::F64: {
      const double d = std::get<double>(v.value);
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      out.u64(bits);
      break;
    }
    case ValueType::BOOL:
      out.u8(std::get<bool>(v.value) ? 1 : 0);
      break;
    case ValueType::STRING:
      out.str(std::get<std::string>(v.value));
      break;
    case ValueType::ARRAY: {
      const MetaArray& a = std::get<MetaArray>(v.value);
      out.u32(static_cast<uint32_t>(a.element_type));
      out.u64(a.values.size());
      for (const MetaValue& e : a.values) encode_value(out, e);
      break;
    }
  }
}

MetaValue meta_u32(uint32_t v) {
  return MetaValue{ValueType::U32, uint64_t{v}};
}
MetaValue meta_u64(uint64_t v) {
  return MetaValue{ValueType::U64, v};
}
MetaValue meta_i32(int32_t v) {
  return MetaValue{ValueType::I32, int64_t{v}};
}
MetaValue meta_f32(float v) {
  return MetaValue{ValueType::F32, double{v}};
}
MetaValue meta_f64(double v) {
  return MetaValue{ValueType::F64, v};
}
MetaValue meta_bool(bool v) {
  return MetaValue{ValueType::BOOL, v};
}
MetaValue meta_string(std::string v) {
  return MetaValue{ValueType::STRING, std::move(v)};
}
MetaValue meta_array(ValueType element_type, std::vector<MetaValue> values) {
  return MetaValue{ValueType::ARRAY, MetaArray{element_type, std::move(values)}};
}

void GgufWriter::kv_raw(std::string key, uint32_t type, std::vector<uint8_t> payload) {
  raw_kvs_.push_back({std::move(key), type, std::move(payload)});
}

WriterTensor& GgufWriter::tensor(std::string name, GgmlType type, std::vector<uint64_t> ne) {
  WriterTensor t;
  t.name = std::move(name);
  t.type_id = static_cast<uint32_t>(type);
  t.ne = std::move(ne);
  return tensor_raw(std::move(t));
}

WriterTensor& GgufWriter::tensor_raw(WriterTensor t) {
  if (t.data.empty()) {
    const auto info = ggml_type_info(t.type_id);
    if (!info) throw std::invalid_argument("tensor_raw: unknown type needs explicit data");
    uint64_t elems = 1;
    for (uint64_t n : t.ne) elems *= n;
    t.data.resize(elems / info->block_values * info->block_bytes);
    // A deterministic pattern that differs between tensors and rows.
    uint32_t state = static_cast<uint32_t>(tensors_.size() * 2654435761u + 12345u);
    for (uint8_t& b : t.data) {
      state = state * 1664525u + 1013904223u;
      b = static_cast<uint8_t>(state >> 24);
    }
  }
  tensors_.push_back(std::move(t));
  return tensors_.back();
}

GgufImage GgufWriter::build() const {
  GgufImage image;
  Bytes out;
  out.u32(0x46554747u);
  out.u32(version);
  image.counts_offset = out.data.size();
  out.u64(tensor_count_override.value_or(tensors_.size()));
  out.u64(kv_count_override.value_or(kvs_.size() + raw_kvs_.size()));
  image.kv_offset = out.data.size();
  for (const auto& [key, value] : kvs_) {
    image.kv_offsets.push_back(out.data.size());
    out.str(key);
    out.u32(static_cast<uint32_t>(value.type));
    encode_value(out, value);
  }
  for (const RawKv& kv : raw_kvs_) {
    image.kv_offsets.push_back(out.data.size());
    out.str(kv.key);
    out.u32(kv.type);
    out.append(kv.payload);
  }
  image.infos_offset = out.data.size();
  uint64_t next = 0;
  for (const WriterTensor& t : tensors_) {
    image.info_offsets.push_back(out.data.size());
    out.str(t.name);
    out.u32(static_cast<uint32_t>(t.ne.size()));
    for (uint64_t n : t.ne) out.u64(n);
    out.u32(t.type_id);
    const uint64_t offset = t.offset.value_or(next);
    out.u64(offset);
    image.tensor_offsets.push_back(offset);
    if (offset <= (uint64_t{1} << 32))
      next = (std::max(next, offset + t.data.size()) + alignment - 1) / alignment * alignment;
  }
  out.data.resize((out.data.size() + alignment - 1) / alignment * alignment, 0);
  image.data_offset = out.data.size();
  for (size_t i = 0; i < tensors_.size(); ++i) {
    // An offset far past any real file is damage under test: leave its data out.
    if (image.tensor_offsets[i] > (uint64_t{1} << 32)) continue;
    const size_t at = image.data_offset + image.tensor_offsets[i];
    if (out.data.size() < at + tensors_[i].data.size())
      out.data.resize(at + tensors_[i].data.size(), 0);
    std::memcpy(out.data.data() + at, tensors_[i].data.data(), tensors_[i].data.size());
  }
  if (!tensors_.empty())
    out.data.resize((out.data.size() + alignment - 1) / alignment * alignment, 0);
  image.bytes = std::move(out.data);
  return image;
}

void GgufWriter::write(const std::filesystem::path& path) const {
  const GgufImage image = build();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(image.bytes.data()),
            static_cast<std::streamsize>(image.bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

GgufWriter moe_writer(const MoeFileSpec& s) {
  GgufWriter w;
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  w.kv("general.architecture", meta_string(s.arch));
  w.kv("general.alignment", meta_u32(32));
  w.kv(s.arch + ".block_count", meta_u32(static_cast<uint32_t>(s.layers)));
  w.kv(s.arch + ".embedding_length", meta_u32(static_cast<uint32_t>(s.d)));
  w.kv(s.arch + ".expert_feed_forward_length", meta_u32(static_cast<uint32_t>(s.f)));
  w.kv(s.arch + ".expert_count", meta_u32(static_cast<uint32_t>(s.n_expert)));
  w.kv(s.arch + ".expert_used_count", meta_u32(static_cast<uint32_t>(s.n_expert_used)));
  w.tensor("token_embd.weight", GgmlType::F32, {u(s.d), 8});
  for (int l = 0; l < s.layers; ++l) {
    const std::string blk = "blk." + std::to_string(l) + ".";
    w.tensor(blk + "ffn_gate_inp.weight", GgmlType::F32, {u(s.d), u(s.n_expert)});
    if (s.merged_gate_up) {
      w.tensor(blk + "ffn_gate_up_exps.weight", GgmlType::IQ3_S,
               {u(s.d), u(2 * s.f), u(s.n_expert)});
    } else {
      w.tensor(blk + "ffn_gate_exps.weight", GgmlType::IQ3_S, {u(s.d), u(s.f), u(s.n_expert)});
      w.tensor(blk + "ffn_up_exps.weight", GgmlType::IQ3_S, {u(s.d), u(s.f), u(s.n_expert)});
    }
    w.tensor(blk + "ffn_down_exps.weight", GgmlType::Q2_0, {u(s.f), u(s.d), u(s.n_expert)});
    if (s.shared_f > 0) {
      w.tensor(blk + "ffn_gate_inp_shexp.weight", GgmlType::F32, {u(s.d)});
      w.tensor(blk + "ffn_gate_shexp.weight", GgmlType::F16, {u(s.d), u(s.shared_f)});
      w.tensor(blk + "ffn_up_shexp.weight", GgmlType::F16, {u(s.d), u(s.shared_f)});
      w.tensor(blk + "ffn_down_shexp.weight", GgmlType::F16, {u(s.shared_f), u(s.d)});
    }
  }
  return w;
}

}  // namespace strata::test
