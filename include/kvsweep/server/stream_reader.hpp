#pragma once
/// The one loop of a streamed completion: the server's bytes through an SSE decoder into a chunk
/// decoder (llama-server's `CompletionStream`, the OpenAI API's `OpenAiStream`), cut short when the
/// request's `stop_when` holds.

#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "kvsweep/core/error.hpp"
#include "kvsweep/http/client.hpp"
#include "kvsweep/http/sse.hpp"

namespace kvsweep::server {

/// Who ended a stream that was read without error: the server (the decoder may still lack its
/// final chunk: the caller decides what that means), or the caller's `stop_when`.
enum class StreamEnd { server, caller };

/// Posts `body` to `path` on `client` and hands each event's data to `decoder.add`, in order. After
/// each piece of bytes, while the decoder has no stop type yet, `stop_when(content so far)` may end
/// the stream there (the connection is closed). `on_bytes` runs as each piece arrives (the OpenAI
/// API times its first). The decoder's failure comes first, then the transport's.
template <class Decoder>
core::Expected<StreamEnd> read_stream(http::Client& client, const std::string& path, std::string body,
                                      std::size_t limit, Decoder& decoder,
                                      const std::function<bool(std::string_view)>& stop_when,
                                      const std::function<void()>& on_bytes = {}) {
  http::SseDecoder sse;
  core::Expected<void> failure;
  bool stopped_by_caller = false;
  auto feed = [&](std::string_view bytes) {
    if (on_bytes) on_bytes();
    for (const std::string& event : sse.feed(bytes)) {
      if (auto added = decoder.add(event); !added) {
        failure = std::unexpected(added.error());
        return false;
      }
    }
    if (decoder.response().stop_type.empty() && stop_when(decoder.response().content)) {
      stopped_by_caller = true;
      return false;
    }
    return true;
  };
  auto result = client.post_text_stream(path, std::move(body), feed, limit);
  if (!failure) return std::unexpected(failure.error());
  if (!result) return std::unexpected(result.error());
  for (const std::string& event : sse.finish())
    if (auto added = decoder.add(event); !added) return std::unexpected(added.error());
  return stopped_by_caller ? StreamEnd::caller : StreamEnd::server;
}

}  // namespace kvsweep::server
