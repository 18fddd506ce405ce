#include "kvsweep/core/read_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "kvsweep/core/no_follow.hpp"

namespace kvsweep::core {

std::optional<std::string> read_file(const std::filesystem::path& path, Links links, std::size_t offset) {
  const int fd = links == Links::refuse ? open_no_follow(path, O_RDONLY) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const auto fail = [fd] {
    const int err = errno;
    ::close(fd);
    errno = err;  // the caller words the read's failure, not the close's
    return std::nullopt;
  };
  // read(), not pread(): a config may come through a pipe (`kvsweep run <(…)`).
  if (offset > 0 && ::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) return fail();
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail();
    if (n == 0) break;
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return bytes;
}

}  // namespace kvsweep::core
