#include "kvsweep/core/error.hpp"

namespace kvsweep::core {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::connect: return "connect";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::http_status: return "http_status";
    case ErrorKind::parse: return "parse";
    case ErrorKind::io: return "io";
    case ErrorKind::process: return "process";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::invalid: return "invalid";
    case ErrorKind::exceeds_context: return "exceeds_context";
    case ErrorKind::oversize: return "oversize";
    case ErrorKind::cancelled: return "cancelled";
    case ErrorKind::internal: return "internal";
  }
  return "unknown";
}

}  // namespace kvsweep::core
