#include "kvsweep/core/no_follow.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace kvsweep::core {

int open_no_follow(const std::filesystem::path& path, int flags, int mode) {
  return ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

std::string link_refusal(const std::filesystem::path& path) {
  return path.string() + " is a symbolic link; kvsweep writes no file of a run directory through a link (remove it)";
}

std::string open_failure(const std::filesystem::path& path) {
  if (errno == ELOOP) return link_refusal(path);
  return "cannot open " + path.string() + ": " + std::strerror(errno);
}

bool write_file_no_follow(const std::filesystem::path& path, const std::string& text) {
  const int fd = open_no_follow(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (fd < 0) return false;
  std::string_view rest = text;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  return ::close(fd) == 0;
}

}  // namespace kvsweep::core
