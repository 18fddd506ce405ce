#include "kvsweep/model/gguf.hpp"

#include <array>
#include <bit>
#include <fstream>
#include <istream>
#include <type_traits>

namespace kvsweep::model {

namespace {

constexpr std::uint32_t max_nesting = 8;  // arrays of arrays, deeper than any real file

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

/// How many kvs and tensor infos the file says it holds.
struct Counts {
  std::int64_t kvs = 0;
  std::int64_t tensors = 0;
};

/// The header: magic, version (only 3) and the counts, checked against what the file can hold.
core::Expected<Counts> read_header(Reader& r, GgufFile& file) {
  std::array<char, 4> head{};
  if (auto ok = r.bytes(head.data(), head.size(), "magic"); !ok) {
    return std::unexpected(ok.error());
  }
  if (head != gguf_magic) {
    return core::fail(core::ErrorKind::parse, "gguf: bad magic (not a GGUF file)");
  }
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
  return Counts{*n_kv, *n_tensors};
}

/// The key-value pairs, then the alignment they set.
core::Expected<void> read_kvs(Reader& r, std::int64_t n_kv, GgufFile& file) {
  file.kvs.reserve(static_cast<std::size_t>(n_kv));
  for (std::int64_t i = 0; i < n_kv; ++i) {
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
  return {};
}

/// One tensor info: name, dimensions, type and offset.
core::Expected<TensorInfo> read_tensor_info(Reader& r) {
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
  if (*n_dims == 0 || *n_dims > gguf_max_dims) {
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
  return info;
}

}  // namespace

core::Expected<GgufFile> parse_gguf(std::istream& in) {
  Reader r(in);
  if (!r.seekable()) {
    return core::fail(core::ErrorKind::io, "gguf: stream is not readable or not seekable");
  }
  GgufFile file;
  auto counts = read_header(r, file);
  if (!counts) {
    return std::unexpected(counts.error());
  }
  if (auto kvs = read_kvs(r, counts->kvs, file); !kvs) {
    return std::unexpected(kvs.error());
  }
  file.tensors.reserve(static_cast<std::size_t>(counts->tensors));
  for (std::int64_t i = 0; i < counts->tensors; ++i) {
    auto info = read_tensor_info(r);
    if (!info) {
      return std::unexpected(info.error());
    }
    file.tensors.push_back(std::move(*info));
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

}  // namespace kvsweep::model
