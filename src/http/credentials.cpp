#include "kvsweep/http/credentials.hpp"

#include "kvsweep/http/client.hpp"

namespace kvsweep::http {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

void Credentials::apply(Client& client) const {
  // One Authorization header: the explicit key (server.api_key_env) wins over the URL's userinfo.
  if (!token.empty()) client.set_bearer_token(token);
  else if (!user.empty() || !password.empty()) client.set_basic_auth(user, password);
}

SplitUrl split_userinfo(std::string_view url) {
  // scheme "://" [userinfo "@"] host …; the authority ends at the first '/', '?' or '#'.
  const auto scheme_end = url.find("://");
  const std::size_t authority = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  const auto authority_end = url.find_first_of("/?#", authority);
  const std::string_view auth = url.substr(authority, authority_end == std::string_view::npos ? std::string_view::npos
                                                                                             : authority_end - authority);
  const auto at = auth.rfind('@');
  if (at == std::string_view::npos) return {std::string(url), "", ""};
  const std::string_view userinfo = auth.substr(0, at);
  const auto colon = userinfo.find(':');
  SplitUrl out;
  out.url = std::string(url.substr(0, authority)) + std::string(url.substr(authority + at + 1));
  out.user = percent_decode(userinfo.substr(0, colon));
  if (colon != std::string_view::npos) out.password = percent_decode(userinfo.substr(colon + 1));
  return out;
}

}  // namespace kvsweep::http
