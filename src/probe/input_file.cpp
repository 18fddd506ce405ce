#include "kvsweep/probe/input_file.hpp"

#include <cerrno>
#include <cstring>

#include "kvsweep/core/host.hpp"
#include "kvsweep/core/read_file.hpp"

namespace kvsweep::probe {

namespace {

/// Why `path` cannot be an input file, or "" when it is a regular file (a link is followed).
std::string not_a_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) return "no such file";
  if (ec) return "cannot read: " + ec.message();
  if (status.type() == std::filesystem::file_type::directory) return "is a directory, not a file";
  if (status.type() != std::filesystem::file_type::regular)
    return "is not a regular file (a FIFO, socket or device; give a file)";
  return "";
}

}  // namespace

nlohmann::json to_json(const InputFile& file) { return {{"key", file.key}, {"path", file.path}, {"sha256", file.sha256}}; }

InputText read_input_file(const std::filesystem::path& path, const std::string& key, const config::Site& site) {
  if (const std::string why = not_a_file(path); !why.empty())
    site.fail(path.string() + ": " + why + " (the path is relative to the config file)");
  std::optional<std::string> bytes = core::read_file(path, core::Links::follow);
  if (!bytes) site.fail(path.string() + ": cannot read: " + std::strerror(errno));
  InputText out{std::move(*bytes), {key, path.string(), ""}};
  out.file.sha256 = core::sha256_hex(out.bytes);
  return out;
}

}  // namespace kvsweep::probe
