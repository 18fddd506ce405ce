#pragma once
/// A server::Api for probes that must not talk to the server (the tool probes: kld, speed): any
/// completion is a test failure naming the probe; everything else answers "unsupported".
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "kvsweep/server/api.hpp"

namespace kvsweep::testing {

class NoApi final : public server::Api {
 public:
  explicit NoApi(std::string probe) : m_probe(std::move(probe)) {}
  core::Expected<server::CompletionResponse> complete(const server::CompletionRequest&) override {
    ADD_FAILURE() << "the " << m_probe << " probe must not use the server";
    return no();
  }
  core::Expected<std::vector<std::int32_t>> tokenize(const std::string&, bool) override { return no(); }
  core::Expected<std::string> detokenize(const std::vector<std::int32_t>&) override { return no(); }
  core::Expected<std::vector<std::vector<float>>> embed(const std::vector<std::string>&) override { return no(); }
  std::string describe() const override { return "none"; }

 private:
  static std::unexpected<core::Error> no() { return core::fail(core::ErrorKind::unsupported, "no"); }
  std::string m_probe;
};

}  // namespace kvsweep::testing
