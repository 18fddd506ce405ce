#pragma once
/// A small GGUF v3 reader and writer: metadata key/values, tensor infos and the aligned data section.
/// The types and layout rules are in gguf.cpp, reading in gguf_read.cpp, writing in gguf_write.cpp.

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "kvsweep/core/error.hpp"

namespace kvsweep::model {

inline constexpr std::uint32_t gguf_version = 3;
inline constexpr std::uint32_t gguf_default_alignment = 32;
inline constexpr std::array<char, 4> gguf_magic = {'G', 'G', 'U', 'F'};
inline constexpr std::uint32_t gguf_max_dims = 4;  // GGML_MAX_DIMS

/// `n` rounded up to a multiple of `alignment` (the padding of tensor data and of the header).
constexpr std::uint64_t pad_to(std::uint64_t n, std::uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

/// The type tag of a metadata value, numbered as in ggml's gguf.h (gguf_type).
enum class ValueType : std::uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6,
  boolean = 7, string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};

std::string_view to_string(ValueType type);

/// The element type of a tensor, numbered as in ggml.h (ggml_type); only the ones we name.
enum class TensorType : std::uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  bf16 = 30,
};

/// Bytes per block and elements per block of a tensor type; nullopt for types we do not know.
struct TensorTypeTraits {
  std::uint64_t block_bytes;
  std::uint64_t block_elements;
};
std::optional<TensorTypeTraits> traits_of(TensorType type);

struct Value;

/// A metadata array: every item has the same type `type` (nested arrays are allowed).
struct Array {
  ValueType type = ValueType::u8;
  std::vector<Value> items;
  bool operator==(const Array&) const = default;
};

/// One metadata value; the variant index equals the numeric ValueType.
struct Value {
  using Data = std::variant<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t,
                            std::int32_t, float, bool, std::string, Array, std::uint64_t,
                            std::int64_t, double>;
  Data data;

  ValueType type() const { return static_cast<ValueType>(data.index()); }
  bool operator==(const Value&) const = default;

  static Value of_u32(std::uint32_t v) { return Value{Data{std::in_place_index<4>, v}}; }
  static Value of_i32(std::int32_t v) { return Value{Data{std::in_place_index<5>, v}}; }
  static Value of_f32(float v) { return Value{Data{std::in_place_index<6>, v}}; }
  static Value of_bool(bool v) { return Value{Data{std::in_place_index<7>, v}}; }
  static Value of_string(std::string v) { return Value{Data{std::in_place_index<8>, std::move(v)}}; }
  static Value of_array(Array v) { return Value{Data{std::in_place_index<9>, std::move(v)}}; }
  static Value of_u64(std::uint64_t v) { return Value{Data{std::in_place_index<10>, v}}; }
};

struct KeyValue {
  std::string key;
  Value value;
  bool operator==(const KeyValue&) const = default;
};

/// Shorthands for the metadata the synthetic models write.
inline KeyValue u32_kv(std::string key, std::uint32_t v) { return {std::move(key), Value::of_u32(v)}; }
inline KeyValue f32_kv(std::string key, float v) { return {std::move(key), Value::of_f32(v)}; }

/// Where a tensor lives: shape in ggml order (ne[0] is the row length), type, offset in the data section.
struct TensorInfo {
  std::string name;
  std::vector<std::uint64_t> shape;
  TensorType type = TensorType::f32;
  std::uint64_t offset = 0;
  bool operator==(const TensorInfo&) const = default;
};

/// Bytes of a tensor's data (without padding); fails for unknown types or rows not a multiple of the block.
core::Expected<std::uint64_t> tensor_bytes(TensorType type, std::span<const std::uint64_t> shape);

/// The header of a GGUF file: everything before the data section.
struct GgufFile {
  std::uint32_t version = gguf_version;
  std::vector<KeyValue> kvs;
  std::vector<TensorInfo> tensors;
  std::uint32_t alignment = gguf_default_alignment;  // from general.alignment when present
  std::uint64_t data_offset = 0;                     // file offset of the data section (set by the reader)

  const Value* find(std::string_view key) const;
};

/// general.alignment when `file` has it (it must be a u32 power of two), else `fallback`.
core::Expected<std::uint32_t> alignment_of(const GgufFile& file, std::uint32_t fallback);

// Encoding of single values, as written to the file (little-endian).
void append_string(std::string& out, std::string_view s);
void append_value(std::string& out, const Value& value);  // type tag + payload
void append_kv(std::string& out, const KeyValue& kv);

/// Parses a GGUF header from `in`; `in` must be seekable. Tensor data is not read.
core::Expected<GgufFile> parse_gguf(std::istream& in);
core::Expected<GgufFile> read_gguf(const std::filesystem::path& path);

/// Assigns each tensor's offset (consecutive, padded to `file.alignment`) and returns the
/// header bytes, padded so the data section starts aligned.
core::Expected<std::string> encode_header(GgufFile& file);

/// IEEE binary16 bits of a binary32 value, rounded to nearest even (overflow gives infinity).
std::uint16_t f16_bits(float f);

/// Appends the bytes of tensor `index` to `out` (exactly tensor_bytes of it).
using TensorFill = std::function<void(std::size_t index, std::string& out)>;

/// Writes `file` to `path` through a buffered stream, asking `fill` for each tensor's data in order.
/// general.alignment, when present, must be a u32 power of two and wins over file.alignment.
core::Expected<void> write_gguf(const std::filesystem::path& path, GgufFile file,
                                const TensorFill& fill);

}  // namespace kvsweep::model
