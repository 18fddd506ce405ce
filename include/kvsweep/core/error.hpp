#pragma once
/// Recoverable failures as values: a small error kind plus a message, carried by Expected<T>.

#include <expected>
#include <string>
#include <string_view>

namespace kvsweep::core {

enum class ErrorKind {
  connect,      // could not connect (server down, refused)
  timeout,      // no answer within the deadline
  http_status,  // the server answered with a non-2xx status
  parse,        // the body or a file could not be parsed
  io,           // a file could not be read or written
  process,      // a child process could not be started or died
  unsupported,  // the backend cannot do what was asked
  invalid,      // bad input (config, arguments)
  exceeds_context,  // the prompt plus the answer budget do not fit the server's context (-c)
  oversize,     // the answer passed the most bytes its request can need (the connection was closed)
  cancelled,    // interrupted by the user
  internal,     // a bug: code threw where it should have returned an error (e.g. a probe item)
};

std::string_view to_string(ErrorKind kind);

struct Error {
  ErrorKind kind;
  std::string message;
  int http_status = 0;  // set for ErrorKind::http_status
  /// ErrorKind::exceeds_context: the prompt plus the answer budget in tokens, when the one who failed
  /// knows it (0 otherwise), so the sweep can say what context would hold it without reading the message.
  long long tokens_needed = 0;
};

template <class T>
using Expected = std::expected<T, Error>;

inline std::unexpected<Error> fail(ErrorKind kind, std::string message, int http_status = 0) {
  return std::unexpected<Error>(Error{kind, std::move(message), http_status});
}

/// An ErrorKind::exceeds_context error that says how many tokens the item needs.
inline std::unexpected<Error> exceeds_context(std::string message, long long tokens_needed, int http_status = 0) {
  return std::unexpected<Error>(Error{ErrorKind::exceeds_context, std::move(message), http_status, tokens_needed});
}

/// Thrown for configuration and fatal setup errors only; caught once in cli::main.
struct FatalError : std::exception {
  explicit FatalError(std::string msg) : message(std::move(msg)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

}  // namespace kvsweep::core
