#include "kvsweep/model/copy_model_info.hpp"

#include <variant>

#include "kvsweep/model/gguf.hpp"

namespace kvsweep::model {

std::optional<CopyModelInfo> read_copy_model_info(const std::filesystem::path& path) {
  const auto file = read_gguf(path);
  if (!file) return std::nullopt;
  const Value* match = file->find("kvsweep.copy_model.match_length");
  if (match == nullptr || !std::holds_alternative<std::uint32_t>(match->data)) return std::nullopt;
  return CopyModelInfo{std::get<std::uint32_t>(match->data)};
}

}  // namespace kvsweep::model
