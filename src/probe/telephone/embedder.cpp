#include "kvsweep/probe/telephone/embedder.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace kvsweep::probe {

ApiEmbedder::ApiEmbedder(server::Api& api, nlohmann::json description, std::size_t capacity)
    : m_api(api), m_description(std::move(description)) {
  // A quarter of the room protects texts asked for more than once (the chains' original
  // texts); the rest holds hop outputs, which are rarely asked for twice.
  capacity = std::max<std::size_t>(capacity, 2);
  m_protected_capacity = std::max<std::size_t>(capacity / 4, 1);
  m_probation_capacity = capacity - m_protected_capacity;
}

nlohmann::json ApiEmbedder::describe() const { return m_description; }

const std::vector<float>* ApiEmbedder::lookup(const std::string& text) {
  auto it = m_entries.find(text);
  if (it == m_entries.end()) return nullptr;
  Entry& entry = it->second;
  if (entry.segment == Segment::protected_) {
    m_protected.splice(m_protected.begin(), m_protected, entry.position);
  } else {
    // Second request: promote, so a stream of one-off hop outputs cannot push it out.
    m_protected.splice(m_protected.begin(), m_probation, entry.position);
    entry.segment = Segment::protected_;
    if (m_protected.size() > m_protected_capacity) {
      auto demoted = std::prev(m_protected.end());
      m_entries.at(*demoted).segment = Segment::probation;
      m_probation.splice(m_probation.begin(), m_protected, demoted);
    }
    evict_overflow();
  }
  return &entry.vector;
}

void ApiEmbedder::insert(const std::string& text, std::vector<float> vector) {
  m_probation.push_front(text);
  m_entries[text] = Entry{std::move(vector), Segment::probation, m_probation.begin()};
  evict_overflow();
}

void ApiEmbedder::evict_overflow() {
  while (m_probation.size() > m_probation_capacity) {
    m_entries.erase(m_probation.back());
    m_probation.pop_back();
  }
}

core::Expected<std::vector<std::vector<float>>> ApiEmbedder::embed(const std::vector<std::string>& texts) {
  std::lock_guard lock(m_mutex);
  std::vector<std::optional<std::vector<float>>> found(texts.size());
  std::vector<std::string> missing;             // distinct, in order of first appearance
  std::vector<std::size_t> missing_of(texts.size(), 0);
  std::unordered_map<std::string, std::size_t> missing_index;

  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (missing_index.contains(texts[i])) {
      missing_of[i] = missing_index[texts[i]];
      continue;
    }
    // Copy at once: a later insert in this call may evict the entry.
    if (const std::vector<float>* hit = lookup(texts[i])) {
      found[i] = *hit;
      ++m_cache_hits;
      continue;
    }
    missing_index.emplace(texts[i], missing.size());
    missing_of[i] = missing.size();
    missing.push_back(texts[i]);
  }

  if (!missing.empty()) {
    ++m_requests_sent;
    m_texts_sent += missing.size();
    auto reply = m_api.embed(missing);
    if (!reply) return std::unexpected(reply.error());
    if (reply->size() != missing.size()) {
      return core::fail(core::ErrorKind::parse,
                        "embedder " + m_api.describe() + " returned " + std::to_string(reply->size()) +
                            " vectors for " + std::to_string(missing.size()) + " inputs");
    }
    for (const auto& vector : *reply) {
      if (vector.empty()) {
        return core::fail(core::ErrorKind::parse, "embedder " + m_api.describe() + " returned an empty vector");
      }
      if (m_dimensions == 0) m_dimensions = vector.size();
      if (vector.size() != m_dimensions) {
        return core::fail(core::ErrorKind::parse, "embedder " + m_api.describe() + " returned a vector of " +
                                                      std::to_string(vector.size()) + " dimensions after " +
                                                      std::to_string(m_dimensions));
      }
    }
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (!found[i]) found[i] = (*reply)[missing_of[i]];
    }
    for (std::size_t j = 0; j < missing.size(); ++j) insert(missing[j], std::move((*reply)[j]));
  }

  std::vector<std::vector<float>> out;
  out.reserve(texts.size());
  for (auto& vector : found) out.push_back(std::move(*vector));
  return out;
}

}  // namespace kvsweep::probe
