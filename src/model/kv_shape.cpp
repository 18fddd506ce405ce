#include "kvsweep/model/kv_shape.hpp"

#include <string>

#include "kvsweep/core/cache_types.hpp"

namespace kvsweep::model {

namespace {

std::optional<std::uint64_t> integer(const GgufFile& file, const std::string& key) {
  const Value* v = file.find(key);
  if (v == nullptr) return std::nullopt;
  return std::visit(
      [](const auto& x) -> std::optional<std::uint64_t> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if (x < 0) return std::nullopt;
          return static_cast<std::uint64_t>(x);
        } else {
          return std::nullopt;
        }
      },
      v->data);
}

std::optional<double> bits_of(std::string_view type) {
  for (const auto& t : core::kCacheTypes)
    if (t.name == type) return t.bits_per_value;
  return std::nullopt;
}

}  // namespace

std::optional<KvShape> kv_shape(const GgufFile& file) {
  const Value* arch = file.find("general.architecture");
  if (arch == nullptr || !std::holds_alternative<std::string>(arch->data)) return std::nullopt;
  const std::string a = std::get<std::string>(arch->data);
  const auto layers = integer(file, a + ".block_count");
  const auto heads = integer(file, a + ".attention.head_count");
  auto heads_kv = integer(file, a + ".attention.head_count_kv");
  if (!heads_kv) heads_kv = heads;
  auto key = integer(file, a + ".attention.key_length");
  auto value = integer(file, a + ".attention.value_length");
  if (!key || !value) {
    const auto embedding = integer(file, a + ".embedding_length");
    if (!embedding || !heads || *heads == 0) return std::nullopt;
    if (!key) key = *embedding / *heads;
    if (!value) value = *embedding / *heads;
  }
  if (!layers || !heads_kv) return std::nullopt;
  return KvShape{*layers, *heads_kv, *key, *value};
}

std::optional<TrainingContext> training_context(const GgufFile& file) {
  const Value* arch = file.find("general.architecture");
  if (arch == nullptr || !std::holds_alternative<std::string>(arch->data)) return std::nullopt;
  TrainingContext c{std::get<std::string>(arch->data), 0};
  const auto tokens = integer(file, c.architecture + ".context_length");
  if (!tokens || *tokens == 0) return std::nullopt;
  c.tokens = *tokens;
  return c;
}

std::optional<double> kv_bytes_per_token(const KvShape& s, std::string_view type_k, std::string_view type_v) {
  const auto bk = bits_of(type_k), bv = bits_of(type_v);
  if (!bk || !bv) return std::nullopt;
  const double per_layer = static_cast<double>(s.heads_kv) *
                           (static_cast<double>(s.key_length) * *bk + static_cast<double>(s.value_length) * *bv) / 8.0;
  return per_layer * static_cast<double>(s.layers);
}

}  // namespace kvsweep::model
