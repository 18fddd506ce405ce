#pragma once
/// The folders kvsweep writes inside a run directory (logs/, kld/, speed/, report/): never through a
/// symbolic link planted in their place, which would have the server logs appended and the report's
/// renames replace the files of the link's target.

#include <filesystem>
#include <string>

namespace kvsweep::sweep {

/// Why a folder kvsweep writes in `run_dir` cannot be written (core::link_refusal: "P is a symbolic
/// link; …"), "" when none of them is a link.
std::string linked_run_folder(const std::filesystem::path& run_dir);

}  // namespace kvsweep::sweep
