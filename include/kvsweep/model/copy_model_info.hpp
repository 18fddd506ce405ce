#pragma once
/// Whether a GGUF file is kvsweep's copy model (an instrument whose reference should recall every
/// line), read from the provenance keys write_copy_model puts in it.

#include <cstdint>
#include <filesystem>
#include <optional>

namespace kvsweep::model {

struct CopyModelInfo {
  std::uint32_t match_length = 0;  // kvsweep.copy_model.match_length: tokens that must match before a copy
};

/// The copy model's knobs when `path` is a GGUF holding kvsweep.copy_model.match_length; nullopt
/// for any other model, and for a file that cannot be read as GGUF.
std::optional<CopyModelInfo> read_copy_model_info(const std::filesystem::path& path);

}  // namespace kvsweep::model
