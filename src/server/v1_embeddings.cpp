#include "kvsweep/server/v1_embeddings.hpp"

namespace kvsweep::server {

core::Expected<std::vector<std::vector<float>>> v1_embeddings(http::Client& client, const std::vector<std::string>& inputs,
                                                               const std::string& model) {
  nlohmann::json request = {{"input", inputs}, {"encoding_format", "float"}};
  if (!model.empty()) request["model"] = model;
  auto body = client.post_for_json("/v1/embeddings", request);
  if (!body) return std::unexpected(body.error());
  try {
    std::vector<std::vector<float>> out(inputs.size());
    for (const auto& d : body->at("data")) {
      const auto idx = d.at("index").get<std::size_t>();
      if (idx >= out.size()) return core::fail(core::ErrorKind::parse, "/v1/embeddings: index out of range");
      out[idx] = d.at("embedding").get<std::vector<float>>();
    }
    return out;
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("/v1/embeddings: ") + e.what());
  }
}

}  // namespace kvsweep::server
