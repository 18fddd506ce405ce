#pragma once
/// Embeddings without a model: 26 letter counts per text, served by a scripted FakeApi.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

#include "kvsweep/core/error.hpp"
#include "fake_api.hpp"

namespace kvsweep::testing {

/// 26 counts, one per letter a–z (case-folded); everything else ignored.
inline std::vector<float> bag_of_letters(const std::string& text) {
  std::vector<float> v(26, 0.0f);
  for (char c : text) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (l >= 'a' && l <= 'z') v[static_cast<std::size_t>(l - 'a')] += 1.0f;
  }
  return v;
}

/// Embeddings: a bag-of-letters vector per input.
inline core::Expected<std::vector<std::vector<float>>> letters(const std::vector<std::string>& inputs) {
  std::vector<std::vector<float>> out;
  for (const auto& text : inputs) out.push_back(bag_of_letters(text));
  return out;
}

/// An embedding server: letters().
inline FakeApi bag_of_letters_server() {
  FakeApi server;
  server.on_embed = letters;
  return server;
}

/// How often `text` was sent to be embedded.
inline int times_embedded(const FakeApi& server, const std::string& text) {
  int n = 0;
  for (const auto& batch : server.embedded) n += static_cast<int>(std::count(batch.begin(), batch.end(), text));
  return n;
}

}  // namespace kvsweep::testing
