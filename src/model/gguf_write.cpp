#include "kvsweep/model/gguf.hpp"

#include <bit>
#include <fstream>
#include <type_traits>

namespace kvsweep::model {

namespace {

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

}  // namespace

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

core::Expected<std::string> encode_header(GgufFile& file) {
  auto alignment = alignment_of(file, file.alignment);
  if (!alignment) {
    return std::unexpected(alignment.error());
  }
  if (!std::has_single_bit(*alignment)) {
    return core::fail(core::ErrorKind::invalid, "gguf: alignment must be a power of two");
  }
  file.alignment = *alignment;

  std::string out;
  out.append(gguf_magic.data(), gguf_magic.size());
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

}  // namespace kvsweep::model
