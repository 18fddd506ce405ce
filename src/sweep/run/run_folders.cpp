#include "kvsweep/sweep/run/run_folders.hpp"

#include "kvsweep/core/no_follow.hpp"

namespace kvsweep::sweep {

std::string linked_run_folder(const std::filesystem::path& run_dir) {
  for (const char* folder : {"logs", "kld", "speed", "report"}) {
    const std::filesystem::path path = run_dir / folder;
    std::error_code ec;
    if (std::filesystem::is_symlink(path, ec)) return core::link_refusal(path);
  }
  return {};
}

}  // namespace kvsweep::sweep
