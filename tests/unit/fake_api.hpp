#pragma once
/// A server::Api a unit test scripts: one function per endpoint, and every request recorded. An
/// endpoint the test leaves unscripted answers ErrorKind::unsupported, as a backend without it does.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kvsweep/core/error.hpp"
#include "kvsweep/server/api.hpp"

namespace kvsweep::testing {

class FakeApi final : public server::Api {
 public:
  /// `call` counts this Api's completions from 1 (the request is already in `requests`).
  using Complete = std::function<core::Expected<server::CompletionResponse>(const server::CompletionRequest&, int call)>;
  using Tokenize = std::function<core::Expected<std::vector<std::int32_t>>(const std::string& text, bool add_special)>;
  using Detokenize = std::function<core::Expected<std::string>(const std::vector<std::int32_t>&)>;
  using Embed = std::function<core::Expected<std::vector<std::vector<float>>>(const std::vector<std::string>&)>;

  FakeApi() = default;
  explicit FakeApi(Complete complete) : on_complete(std::move(complete)) {}

  Complete on_complete;
  Tokenize on_tokenize;
  Detokenize on_detokenize;
  Embed on_embed;

  // What it was asked, in order.
  std::vector<server::CompletionRequest> requests;  // every completion, those of complete_each included
  std::vector<server::CompletionRequest> each_requests;  // each complete_each call's request
  std::vector<std::size_t> each_prompts;                 // and how many prompts it carried
  std::vector<std::pair<std::string, bool>> tokenized;   // text, add_special
  std::vector<std::vector<std::int32_t>> detokenized;
  std::vector<std::vector<std::string>> embedded;        // each embed call's inputs

  core::Expected<server::CompletionResponse> complete(const server::CompletionRequest& request) override {
    requests.push_back(request);
    if (!on_complete) return unsupported("completion");
    return on_complete(request, static_cast<int>(requests.size()));
  }
  /// Recorded, then answered prompt by prompt (the default), so `on_complete` sees each.
  core::Expected<std::vector<server::CompletionResponse>> complete_each(
      const server::CompletionRequest& request, const std::vector<std::vector<std::int32_t>>& prompts) override {
    each_requests.push_back(request);
    each_prompts.push_back(prompts.size());
    return server::Api::complete_each(request, prompts);
  }
  core::Expected<std::vector<std::int32_t>> tokenize(const std::string& text, bool add_special) override {
    tokenized.emplace_back(text, add_special);
    if (!on_tokenize) return unsupported("tokenizer");
    return on_tokenize(text, add_special);
  }
  core::Expected<std::string> detokenize(const std::vector<std::int32_t>& tokens) override {
    detokenized.push_back(tokens);
    if (!on_detokenize) return unsupported("detokenizer");
    return on_detokenize(tokens);
  }
  core::Expected<std::vector<std::vector<float>>> embed(const std::vector<std::string>& inputs) override {
    embedded.push_back(inputs);
    if (!on_embed) return unsupported("embeddings");
    return on_embed(inputs);
  }
  std::string describe() const override { return "fake"; }

 private:
  static std::unexpected<core::Error> unsupported(const std::string& what) {
    return core::fail(core::ErrorKind::unsupported, "fake: no " + what);
  }
};

/// A server for probes that must not talk to it (the tool probes: kld, speed): any completion is a
/// test failure naming the probe; every endpoint answers "unsupported".
inline FakeApi no_api(const std::string& probe) {
  FakeApi api;
  api.on_complete = [probe](const server::CompletionRequest&, int) -> core::Expected<server::CompletionResponse> {
    ADD_FAILURE() << "the " << probe << " probe must not use the server";
    return core::fail(core::ErrorKind::unsupported, "no");
  };
  return api;
}

}  // namespace kvsweep::testing
