#include "kvsweep/model/model_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace kvsweep::model {

core::Expected<void> check_model_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) return core::fail(core::ErrorKind::invalid, "no such file");
  if (!std::filesystem::is_regular_file(status)) return core::fail(core::ErrorKind::invalid, "not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::fail(core::ErrorKind::invalid, std::string("cannot be read: ") + std::strerror(errno));
  // Every GGUF file starts with the four bytes "GGUF" (ggml's docs/gguf.md, "File Structure").
  char magic[4] = {};
  in.read(magic, sizeof magic);
  if (in.gcount() != 4 || std::string_view(magic, 4) != "GGUF")
    return core::fail(core::ErrorKind::invalid, "not a GGUF file (it does not start with the bytes \"GGUF\")");
  return {};
}

}  // namespace kvsweep::model
