#include "kvsweep/model/gguf.hpp"

#include <array>
#include <bit>
#include <fstream>
#include <istream>
#include <limits>
#include <sstream>
#include <type_traits>

namespace kvsweep::model {

namespace {

constexpr std::array<char, 4> magic = {'G', 'G', 'U', 'F'};
constexpr std::uint32_t max_dims = 4;     // GGML_MAX_DIMS
constexpr std::uint32_t max_nesting = 8;  // arrays of arrays, deeper than any real file

template <class T>
void append_le(std::string& out, T value) {
  using U = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>>;
  U bits;
  if constexpr (std::is_same_v<T, bool>) {
    bits = value ? 1 : 0;
  } else {
    bits = static_cast<U>(value);
  }
  for (std::size_t i = 0; i < sizeof(U); ++i) {
    out.push_back(static_cast<char>((bits >> (8 * i)) & 0xffu));
  }
}

// float and double have no make_unsigned; give them their same-size integer.
template <>
void append_le<float>(std::string& out, float value) {
  append_le(out, std::bit_cast<std::uint32_t>(value));
}
template <>
void append_le<double>(std::string& out, double value) {
  append_le(out, std::bit_cast<std::uint64_t>(value));
}

void append_payload(std::string& out, const Value& value);

void append_array(std::string& out, const Array& array) {
  append_le(out, static_cast<std::uint32_t>(array.type));
  append_le(out, static_cast<std::uint64_t>(array.items.size()));
  for (const Value& item : array.items) {
    append_payload(out, item);
  }
}

void append_payload(std::string& out, const Value& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          append_string(out, v);
        } else if constexpr (std::is_same_v<T, Array>) {
          append_array(out, v);
        } else {
          append_le(out, v);
        }
      },
      value.data);
}

std::uint64_t pad_to(std::uint64_t n, std::uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

bool is_power_of_two(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

// Minimum encoded size of one array element of `type`, to bound counts by the bytes left.
std::uint64_t min_encoded_size(ValueType type) {
  switch (type) {
    case ValueType::u8:
    case ValueType::i8:
    case ValueType::boolean: return 1;
    case ValueType::u16:
    case ValueType::i16: return 2;
    case ValueType::u32:
    case ValueType::i32:
    case ValueType::f32: return 4;
    case ValueType::u64:
    case ValueType::i64:
    case ValueType::f64:
    case ValueType::string: return 8;
    case ValueType::array: return 12;
  }
  return 1;
}

/// Reads little-endian fields from a stream, never past its end.
class Reader {
 public:
  explicit Reader(std::istream& in) : m_in(in) {
    const auto start = m_in.tellg();
    m_in.seekg(0, std::ios::end);
    const auto end = m_in.tellg();
    m_in.seekg(start);
    m_ok = start != std::streampos(-1) && end != std::streampos(-1) && m_in.good();
    m_remaining = m_ok ? static_cast<std::uint64_t>(end - start) : 0;
  }

  bool seekable() const { return m_ok; }
  std::uint64_t position() const { return m_position; }
  std::uint64_t remaining() const { return m_remaining; }

  core::Expected<void> bytes(char* dst, std::uint64_t n, std::string_view what) {
    if (n > m_remaining) {
      return core::fail(core::ErrorKind::parse,
                        "gguf: truncated at byte " + std::to_string(m_position) + " reading " +
                            std::string(what));
    }
    m_in.read(dst, static_cast<std::streamsize>(n));
    if (!m_in) {
      return core::fail(core::ErrorKind::io, "gguf: read failed at byte " + std::to_string(m_position));
    }
    m_position += n;
    m_remaining -= n;
    return {};
  }

  template <class T>
  core::Expected<T> scalar(std::string_view what) {
    constexpr std::size_t size = std::is_same_v<T, bool> ? 1 : sizeof(T);
    std::array<unsigned char, size> raw{};
    if (auto r = bytes(reinterpret_cast<char*>(raw.data()), size, what); !r) {
      return std::unexpected(r.error());
    }
    std::conditional_t<size == 1, std::uint8_t,
                       std::conditional_t<size == 2, std::uint16_t,
                                          std::conditional_t<size == 4, std::uint32_t, std::uint64_t>>>
        bits = 0;
    for (std::size_t i = 0; i < size; ++i) {
      bits |= static_cast<decltype(bits)>(static_cast<decltype(bits)>(raw[i]) << (8 * i));
    }
    if constexpr (std::is_same_v<T, bool>) {
      return bits != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      return std::bit_cast<T>(bits);
    } else {
      return static_cast<T>(bits);
    }
  }

  core::Expected<std::string> string(std::string_view what) {
    auto len = scalar<std::uint64_t>(what);
    if (!len) {
      return std::unexpected(len.error());
    }
    if (*len > m_remaining) {
      return core::fail(core::ErrorKind::parse, "gguf: string length " + std::to_string(*len) +
                                                    " past end of file reading " + std::string(what));
    }
    std::string s(static_cast<std::size_t>(*len), '\0');
    if (auto r = bytes(s.data(), *len, what); !r) {
      return std::unexpected(r.error());
    }
    return s;
  }

  core::Expected<Value> value(ValueType type, std::string_view what, std::uint32_t depth);

 private:
  std::istream& m_in;
  std::uint64_t m_position = 0;
  std::uint64_t m_remaining = 0;
  bool m_ok = false;
};

template <class T>
core::Expected<Value> wrap(core::Expected<T> v) {
  if (!v) {
    return std::unexpected(v.error());
  }
  return Value{Value::Data{std::move(*v)}};
}

core::Expected<Value> Reader::value(ValueType type, std::string_view what, std::uint32_t depth) {
  switch (type) {
    case ValueType::u8: return wrap(scalar<std::uint8_t>(what));
    case ValueType::i8: return wrap(scalar<std::int8_t>(what));
    case ValueType::u16: return wrap(scalar<std::uint16_t>(what));
    case ValueType::i16: return wrap(scalar<std::int16_t>(what));
    case ValueType::u32: return wrap(scalar<std::uint32_t>(what));
    case ValueType::i32: return wrap(scalar<std::int32_t>(what));
    case ValueType::f32: return wrap(scalar<float>(what));
    case ValueType::boolean: return wrap(scalar<bool>(what));
    case ValueType::string: return wrap(string(what));
    case ValueType::u64: return wrap(scalar<std::uint64_t>(what));
    case ValueType::i64: return wrap(scalar<std::int64_t>(what));
    case ValueType::f64: return wrap(scalar<double>(what));
    case ValueType::array: {
      if (depth >= max_nesting) {
        return core::fail(core::ErrorKind::parse, "gguf: arrays nested too deep in " + std::string(what));
      }
      auto elem = scalar<std::uint32_t>(what);
      if (!elem) {
        return std::unexpected(elem.error());
      }
      if (*elem > static_cast<std::uint32_t>(ValueType::f64)) {
        return core::fail(core::ErrorKind::parse, "gguf: unknown array element type " +
                                                      std::to_string(*elem) + " in " + std::string(what));
      }
      auto count = scalar<std::uint64_t>(what);
      if (!count) {
        return std::unexpected(count.error());
      }
      const auto elem_type = static_cast<ValueType>(*elem);
      if (*count > m_remaining / min_encoded_size(elem_type)) {
        return core::fail(core::ErrorKind::parse, "gguf: array of " + std::to_string(*count) +
                                                      " items past end of file in " + std::string(what));
      }
      Array array{elem_type, {}};
      array.items.reserve(static_cast<std::size_t>(*count));
      for (std::uint64_t i = 0; i < *count; ++i) {
        auto item = value(elem_type, what, depth + 1);
        if (!item) {
          return std::unexpected(item.error());
        }
        array.items.push_back(std::move(*item));
      }
      return Value{Value::Data{std::in_place_index<9>, std::move(array)}};
    }
  }
  return core::fail(core::ErrorKind::parse, "gguf: unknown value type " +
                                                std::to_string(static_cast<std::uint32_t>(type)) +
                                                " for " + std::string(what));
}

// general.alignment if present (must be a u32 power of two), else the default.
core::Expected<std::uint32_t> alignment_of(const GgufFile& file, std::uint32_t fallback) {
  const Value* v = file.find("general.alignment");
  if (v == nullptr) {
    return fallback;
  }
  const auto* a = std::get_if<std::uint32_t>(&v->data);
  if (a == nullptr) {
    return core::fail(core::ErrorKind::parse, "gguf: general.alignment must be u32, not " +
                                                  std::string(to_string(v->type())));
  }
  if (!is_power_of_two(*a)) {
    return core::fail(core::ErrorKind::parse,
                      "gguf: general.alignment " + std::to_string(*a) + " is not a power of two");
  }
  return *a;
}

}  // namespace

std::string_view to_string(ValueType type) {
  switch (type) {
    case ValueType::u8: return "u8";
    case ValueType::i8: return "i8";
    case ValueType::u16: return "u16";
    case ValueType::i16: return "i16";
    case ValueType::u32: return "u32";
    case ValueType::i32: return "i32";
    case ValueType::f32: return "f32";
    case ValueType::boolean: return "bool";
    case ValueType::string: return "string";
    case ValueType::array: return "array";
    case ValueType::u64: return "u64";
    case ValueType::i64: return "i64";
    case ValueType::f64: return "f64";
  }
  return "unknown";
}

std::optional<TensorTypeTraits> traits_of(TensorType type) {
  // Block layouts from ggml-common.h: q4_0 = f16 scale + 16 bytes, q8_0 = f16 scale + 32 bytes, ...
  switch (type) {
    case TensorType::f32: return TensorTypeTraits{4, 1};
    case TensorType::f16: return TensorTypeTraits{2, 1};
    case TensorType::bf16: return TensorTypeTraits{2, 1};
    case TensorType::q4_0: return TensorTypeTraits{18, 32};
    case TensorType::q4_1: return TensorTypeTraits{20, 32};
    case TensorType::q5_0: return TensorTypeTraits{22, 32};
    case TensorType::q5_1: return TensorTypeTraits{24, 32};
    case TensorType::q8_0: return TensorTypeTraits{34, 32};
  }
  return std::nullopt;
}

core::Expected<std::uint64_t> tensor_bytes(TensorType type, std::span<const std::uint64_t> shape) {
  const auto traits = traits_of(type);
  if (!traits) {
    return core::fail(core::ErrorKind::unsupported,
                      "gguf: unknown tensor type " + std::to_string(static_cast<std::uint32_t>(type)));
  }
  if (shape.empty() || shape.size() > max_dims) {
    return core::fail(core::ErrorKind::invalid, "gguf: a tensor has 1 to 4 dimensions, not " +
                                                    std::to_string(shape.size()));
  }
  if (shape[0] % traits->block_elements != 0) {
    return core::fail(core::ErrorKind::invalid, "gguf: row of " + std::to_string(shape[0]) +
                                                    " elements is not a multiple of the block size " +
                                                    std::to_string(traits->block_elements));
  }
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) {
      return core::fail(core::ErrorKind::invalid, "gguf: tensor has too many elements");
    }
    n *= d;
  }
  return n / traits->block_elements * traits->block_bytes;
}

const Value* GgufFile::find(std::string_view key) const {
  for (const KeyValue& kv : kvs) {
    if (kv.key == key) {
      return &kv.value;
    }
  }
  return nullptr;
}

void append_string(std::string& out, std::string_view s) {
  append_le(out, static_cast<std::uint64_t>(s.size()));
  out.append(s);
}

void append_value(std::string& out, const Value& value) {
  append_le(out, static_cast<std::uint32_t>(value.type()));
  append_payload(out, value);
}

void append_kv(std::string& out, const KeyValue& kv) {
  append_string(out, kv.key);
  append_value(out, kv.value);
}

core::Expected<GgufFile> parse_gguf(std::istream& in) {
  Reader r(in);
  if (!r.seekable()) {
    return core::fail(core::ErrorKind::io, "gguf: stream is not readable or not seekable");
  }
  std::array<char, 4> head{};
  if (auto ok = r.bytes(head.data(), head.size(), "magic"); !ok) {
    return std::unexpected(ok.error());
  }
  if (head != magic) {
    return core::fail(core::ErrorKind::parse, "gguf: bad magic (not a GGUF file)");
  }
  GgufFile file;
  auto version = r.scalar<std::uint32_t>("version");
  if (!version) {
    return std::unexpected(version.error());
  }
  if (*version != gguf_version) {
    return core::fail(core::ErrorKind::unsupported,
                      "gguf: version " + std::to_string(*version) + " (only 3 is supported)");
  }
  file.version = *version;
  auto n_tensors = r.scalar<std::int64_t>("tensor count");
  if (!n_tensors) {
    return std::unexpected(n_tensors.error());
  }
  auto n_kv = r.scalar<std::int64_t>("kv count");
  if (!n_kv) {
    return std::unexpected(n_kv.error());
  }
  // Each kv needs at least 8 (key length) + 4 (type) + 1 bytes; each tensor info at least 8 + 4 + 4 + 8.
  if (*n_kv < 0 || static_cast<std::uint64_t>(*n_kv) > r.remaining() / 13 || *n_tensors < 0 ||
      static_cast<std::uint64_t>(*n_tensors) > r.remaining() / 24) {
    return core::fail(core::ErrorKind::parse, "gguf: implausible counts: " + std::to_string(*n_kv) +
                                                  " kvs, " + std::to_string(*n_tensors) + " tensors");
  }

  file.kvs.reserve(static_cast<std::size_t>(*n_kv));
  for (std::int64_t i = 0; i < *n_kv; ++i) {
    auto key = r.string("kv key");
    if (!key) {
      return std::unexpected(key.error());
    }
    if (file.find(*key) != nullptr) {
      return core::fail(core::ErrorKind::parse, "gguf: duplicate key " + *key);
    }
    auto type = r.scalar<std::uint32_t>(*key);
    if (!type) {
      return std::unexpected(type.error());
    }
    if (*type > static_cast<std::uint32_t>(ValueType::f64)) {
      return core::fail(core::ErrorKind::parse,
                        "gguf: unknown value type " + std::to_string(*type) + " for " + *key);
    }
    auto value = r.value(static_cast<ValueType>(*type), *key, 0);
    if (!value) {
      return std::unexpected(value.error());
    }
    file.kvs.push_back({std::move(*key), std::move(*value)});
  }
  auto alignment = alignment_of(file, gguf_default_alignment);
  if (!alignment) {
    return std::unexpected(alignment.error());
  }
  file.alignment = *alignment;

  file.tensors.reserve(static_cast<std::size_t>(*n_tensors));
  for (std::int64_t i = 0; i < *n_tensors; ++i) {
    TensorInfo info;
    auto name = r.string("tensor name");
    if (!name) {
      return std::unexpected(name.error());
    }
    info.name = std::move(*name);
    auto n_dims = r.scalar<std::uint32_t>(info.name);
    if (!n_dims) {
      return std::unexpected(n_dims.error());
    }
    if (*n_dims == 0 || *n_dims > max_dims) {
      return core::fail(core::ErrorKind::parse, "gguf: tensor " + info.name + " has " +
                                                    std::to_string(*n_dims) + " dimensions");
    }
    for (std::uint32_t d = 0; d < *n_dims; ++d) {
      auto ne = r.scalar<std::int64_t>(info.name);
      if (!ne) {
        return std::unexpected(ne.error());
      }
      if (*ne < 0) {
        return core::fail(core::ErrorKind::parse, "gguf: tensor " + info.name + " has a negative dimension");
      }
      info.shape.push_back(static_cast<std::uint64_t>(*ne));
    }
    auto type = r.scalar<std::uint32_t>(info.name);
    if (!type) {
      return std::unexpected(type.error());
    }
    auto offset = r.scalar<std::uint64_t>(info.name);
    if (!offset) {
      return std::unexpected(offset.error());
    }
    info.type = static_cast<TensorType>(*type);
    info.offset = *offset;
    file.tensors.push_back(std::move(info));
  }
  file.data_offset = pad_to(r.position(), file.alignment);
  return file;
}

core::Expected<GgufFile> read_gguf(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return core::fail(core::ErrorKind::io, path.string() + ": cannot open for reading");
  }
  auto file = parse_gguf(in);
  if (!file) {
    return core::fail(file.error().kind, path.string() + ": " + file.error().message);
  }
  return file;
}

core::Expected<std::string> encode_header(GgufFile& file) {
  auto alignment = alignment_of(file, file.alignment);
  if (!alignment) {
    return std::unexpected(alignment.error());
  }
  if (!is_power_of_two(*alignment)) {
    return core::fail(core::ErrorKind::invalid, "gguf: alignment must be a power of two");
  }
  file.alignment = *alignment;

  std::string out;
  out.append(magic.data(), magic.size());
  append_le(out, file.version);
  append_le(out, static_cast<std::int64_t>(file.tensors.size()));
  append_le(out, static_cast<std::int64_t>(file.kvs.size()));
  for (std::size_t i = 0; i < file.kvs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (file.kvs[j].key == file.kvs[i].key) {
        return core::fail(core::ErrorKind::invalid, "gguf: duplicate key " + file.kvs[i].key);
      }
    }
    append_kv(out, file.kvs[i]);
  }
  std::uint64_t offset = 0;
  for (TensorInfo& info : file.tensors) {
    auto bytes = tensor_bytes(info.type, info.shape);
    if (!bytes) {
      return core::fail(bytes.error().kind, "tensor " + info.name + ": " + bytes.error().message);
    }
    info.offset = offset;
    offset += pad_to(*bytes, file.alignment);
    append_string(out, info.name);
    append_le(out, static_cast<std::uint32_t>(info.shape.size()));
    for (std::uint64_t d : info.shape) {
      append_le(out, static_cast<std::int64_t>(d));
    }
    append_le(out, static_cast<std::uint32_t>(info.type));
    append_le(out, info.offset);
  }
  out.resize(static_cast<std::size_t>(pad_to(out.size(), file.alignment)), '\0');
  file.data_offset = out.size();
  return out;
}

core::Expected<void> write_gguf(const std::filesystem::path& path, GgufFile file, const TensorFill& fill) {
  auto header = encode_header(file);
  if (!header) {
    return std::unexpected(header.error());
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return core::fail(core::ErrorKind::io, path.string() + ": cannot open for writing");
  }
  // Large writes (whole tensors) go straight through the stream buffer.
  const auto write_all = [&]() -> core::Expected<void> {
    out.write(header->data(), static_cast<std::streamsize>(header->size()));
    std::string data;
    for (std::size_t i = 0; i < file.tensors.size() && out; ++i) {
      const TensorInfo& info = file.tensors[i];
      const std::uint64_t expected = *tensor_bytes(info.type, info.shape);  // checked by encode_header
      data.clear();
      data.reserve(static_cast<std::size_t>(pad_to(expected, file.alignment)));
      if (fill) {
        fill(i, data);
      }
      if (data.size() != expected) {
        return core::fail(core::ErrorKind::invalid, "gguf: tensor " + info.name + " got " +
                                                        std::to_string(data.size()) + " bytes, expected " +
                                                        std::to_string(expected));
      }
      data.resize(static_cast<std::size_t>(pad_to(expected, file.alignment)), '\0');
      out.write(data.data(), static_cast<std::streamsize>(data.size()));
    }
    out.flush();
    if (!out) {
      return core::fail(core::ErrorKind::io, path.string() + ": write failed");
    }
    return {};
  };
  auto written = write_all();
  if (!written) {
    // Leave no half-written model behind for a later run to load.
    out.close();
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  return written;
}

std::uint16_t f16_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xffu) {
    return static_cast<std::uint16_t>(sign | 0x7c00u | (mant != 0 ? 0x200u : 0u));
  }
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) {
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  }
  if (e <= 0) {
    if (e < -10) {
      return static_cast<std::uint16_t>(sign);
    }
    mant |= 0x800000u;
    const auto shift = static_cast<std::uint32_t>(14 - e);
    std::uint32_t half = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (half & 1u) != 0)) {
      ++half;
    }
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u) != 0)) {
    ++half;  // a carry into the exponent is the correct rounding
  }
  return static_cast<std::uint16_t>(sign | half);
}


}  // namespace kvsweep::model
