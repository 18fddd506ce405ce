#pragma once
/// The check a model file passes before any server is launched for it: it exists, is a
/// readable regular file, and starts with the GGUF magic.

#include <filesystem>

#include "kvsweep/core/error.hpp"

namespace kvsweep::model {

/// ErrorKind::invalid saying what is wrong with `path` (the message does not repeat the path).
core::Expected<void> check_model_file(const std::filesystem::path& path);

}  // namespace kvsweep::model
