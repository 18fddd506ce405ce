#pragma once
/// ApiEmbedder: the run's embedding instrument — a server::Api's embed() behind the
/// probe::Embedder interface, with a bounded in-memory cache keyed by text.

#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/server/api.hpp"

namespace kvsweep::probe {

/// Embeds through the Api it is handed (which it does not own) and caches every vector by
/// its exact text, so a chain's original text is sent to the server once per run rather
/// than once per chain and every cell is scored against the same reference vector.
///
/// The cache is a segmented LRU: a text seen once sits in a probation segment; a text asked
/// for again is promoted to a protected segment that hop outputs (each usually seen once)
/// cannot flush. Thread-safe: cells running in parallel share it; one embed() at a time
/// (the embedding server answers one request at a time anyway).
class ApiEmbedder final : public Embedder {
 public:
  static constexpr std::size_t default_capacity = 4096;

  /// `description` names the instrument in the manifest: model path, model hash, backend, …
  /// `capacity` bounds the number of cached vectors (split between the two segments).
  ApiEmbedder(server::Api& api, nlohmann::json description, std::size_t capacity = default_capacity);

  /// One vector per input, in order. Only texts not in the cache reach the server, in one
  /// batch, each distinct text once. Errors from the server are passed through; a reply
  /// with the wrong number of vectors, an empty vector or dimensions that differ from the
  /// vectors already seen is a parse error.
  core::Expected<std::vector<std::vector<float>>> embed(const std::vector<std::string>& texts) override;
  nlohmann::json describe() const override;

  /// Counters for the manifest and for tests.
  std::size_t requests_sent() const { return m_requests_sent; }
  std::size_t texts_sent() const { return m_texts_sent; }
  std::size_t cache_hits() const { return m_cache_hits; }
  std::size_t cached() const { return m_entries.size(); }

 private:
  enum class Segment { probation, protected_ };
  struct Entry {
    std::vector<float> vector;
    Segment segment = Segment::probation;
    std::list<std::string>::iterator position;
  };

  const std::vector<float>* lookup(const std::string& text);
  void insert(const std::string& text, std::vector<float> vector);
  void evict_overflow();

  std::mutex m_mutex;  // guards the cache and the counters during embed()
  server::Api& m_api;
  nlohmann::json m_description;
  std::size_t m_probation_capacity;
  std::size_t m_protected_capacity;
  std::unordered_map<std::string, Entry> m_entries;
  std::list<std::string> m_probation;  // most recently used first
  std::list<std::string> m_protected;  // most recently used first
  std::size_t m_dimensions = 0;        // 0 until the first vector arrives
  std::size_t m_requests_sent = 0;
  std::size_t m_texts_sent = 0;
  std::size_t m_cache_hits = 0;
};

}  // namespace kvsweep::probe
