#pragma once
/// A file a probe's config names (a prompts file, a texts file, a corpus file) and the sha256 of
/// what was read from it. The manifest records each probe's inputs, so a resume or a merge refuses
/// a run whose inputs changed (sweep/store/input_hashes), as it refuses a changed model.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/config/keys.hpp"

namespace kvsweep::probe {

struct InputFile {
  std::string key;     // the probe config's key, e.g. "prompts_file"
  std::string path;    // as read: a relative path resolved against the config's folder
  std::string sha256;  // of the bytes read
};

/// {"key":…, "path":…, "sha256":…}
nlohmann::json to_json(const InputFile& file);

/// What was read from an input file: its bytes and its InputFile.
struct InputText {
  std::string bytes;
  InputFile file;
};

/// Reads the file `path` that config key `key` names. Fails at `site` unless it is a regular file
/// that can be read: a directory, a FIFO (which would block even a dry run) or a device is refused
/// before it is opened.
InputText read_input_file(const std::filesystem::path& path, const std::string& key, const config::Site& site);

}  // namespace kvsweep::probe
