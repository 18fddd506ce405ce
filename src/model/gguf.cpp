#include "kvsweep/model/gguf.hpp"

#include <bit>
#include <limits>

namespace kvsweep::model {

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
  if (shape.empty() || shape.size() > gguf_max_dims) {
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
  if (!std::has_single_bit(*a)) {
    return core::fail(core::ErrorKind::parse,
                      "gguf: general.alignment " + std::to_string(*a) + " is not a power of two");
  }
  return *a;
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
