#include "kvsweep/server/lifecycle/url_check.hpp"

#include "kvsweep/http/client.hpp"

namespace kvsweep::server {

core::Expected<void> check_answers(const UrlCheck& check) {
  http::Client client(check.url, http::Timeouts{check.timeout, check.timeout});
  if (!check.api_key.empty()) client.set_bearer_token(check.api_key);
  if (!check.user.empty() || !check.password.empty()) client.set_basic_auth(check.user, check.password);
  auto response = client.get(check.path);
  if (!response) return std::unexpected(response.error());
  return {};
}

}  // namespace kvsweep::server
