#pragma once
/// The request trace: when the environment variable KVSWEEP_HTTP_TRACE names a file, every
/// request any http::Client makes is appended to it as one JSON line (bench/overhead reads it to
/// set each request's client-side wall time against the server's own timings). Off otherwise.
/// A line holds the method, the server's scheme://host:port, the path, the status and times:
/// never a body, a header or URL credentials, so an API key cannot reach it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kvsweep::http {

struct TraceEntry {
  std::string method;
  std::string server;  // base URL, credentials removed
  std::string path;
  int status = 0;                   // 0 when no answer came
  bool stream = false;
  bool cancelled = false;           // a streamed answer the caller stopped
  bool fresh = false;               // no kept-alive connection was open: this request connected
  double ms = 0;                    // client wall time of the request, connect included
  std::size_t request_bytes = 0;    // the request body's size (a prompt sent as text or as ids)
  std::optional<double> server_ms;  // the server-reported time of the answer, when it carries one
  std::string error;                // the client-side failure, if any
};

/// Whether KVSWEEP_HTTP_TRACE is set (read once per process).
bool trace_enabled();

/// Appends `entry` to the trace file as one line; thread-safe. Does nothing when tracing is off.
void trace(const TraceEntry& entry);

/// `base_url` without any "user:password@" part.
std::string without_credentials(std::string_view base_url);

/// The server-reported time of an answer body: llama-server's `timings.prompt_ms + predicted_ms`,
/// summed over the elements of a multi-prompt answer (a JSON array); nullopt when the body is not
/// JSON or carries no timings (/tokenize, /v1/embeddings, Ollama).
std::optional<double> server_ms_of(std::string_view body);

/// The same for the tail of a streamed (server-sent events) answer: the timings of the last
/// complete `data:` event that carries them (llama-server sends them with the final event, and
/// with every event when asked for timings_per_token).
std::optional<double> server_ms_of_stream(std::string_view tail);

}  // namespace kvsweep::http
