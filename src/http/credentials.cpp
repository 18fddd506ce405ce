#include "kvsweep/http/credentials.hpp"

#include <fstream>

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

Credentials credentials_from_args(const std::vector<std::string>& args) {
  Credentials c;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto eq = args[i].find('=');
    const std::string flag = args[i].substr(0, eq);
    // llama-server, vLLM and SGLang spell it --api-key, llama-cpp-python --api_key.
    if (flag != "--api-key" && flag != "--api_key" && flag != "--api-key-file") continue;
    std::string value = eq != std::string::npos ? args[i].substr(eq + 1) : i + 1 < args.size() ? args[i + 1] : "";
    if (flag == "--api-key-file") {
      std::ifstream in(value);
      std::getline(in, value);
    }
    c.token = value.substr(0, value.find(','));
  }
  return c;
}

SplitUrl split_userinfo(std::string_view url) {
  // scheme "://" [userinfo "@"] host …; the authority ends at the first '/', '?' or '#'.
  const auto scheme_end = url.find("://");
  const std::size_t authority = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  const auto authority_end = url.find_first_of("/?#", authority);
  const std::string_view auth = url.substr(authority, authority_end == std::string_view::npos ? std::string_view::npos
                                                                                             : authority_end - authority);
  auto at = auth.rfind('@');
  if (at == std::string_view::npos) {
    // A userinfo with characters it should have percent-encoded ("alice:se/cret@host"): an '@'
    // past the first '/' after a "user:" is the userinfo's end, not part of a path.
    const std::string_view rest = url.substr(authority, url.find_first_of("?#", authority) - authority);
    const auto late = rest.rfind('@');
    const auto colon = rest.substr(0, late).find(':');
    if (late == std::string_view::npos || colon == std::string_view::npos) return {std::string(url), "", ""};
    // "host:8080/a@b" is a port and a path.
    const std::string_view after = rest.substr(colon + 1, rest.find('/') - colon - 1);
    if (!after.empty() && after.find_first_not_of("0123456789") == std::string_view::npos)
      return {std::string(url), "", ""};
    at = late;
  }
  const std::string_view userinfo = url.substr(authority, at);
  const auto colon = userinfo.find(':');
  SplitUrl out;
  out.url = std::string(url.substr(0, authority)) + std::string(url.substr(authority + at + 1));
  out.user = percent_decode(userinfo.substr(0, colon));
  if (colon != std::string_view::npos) out.password = percent_decode(userinfo.substr(colon + 1));
  return out;
}

std::string url_problem(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return "not a URL (no scheme://)";
  const std::string_view scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return "scheme '" + std::string(scheme) + "' is not http or https";
  const std::string_view rest = url.substr(scheme_end + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos) return "the host part holds an '@'";
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {  // [IPv6]:port
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return "an IPv6 host without its ']'";
    host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return "junk after the IPv6 host";
      port = authority.substr(close + 2);
      if (port.empty()) return "an empty port after ':'";
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) return "an empty port after ':'";
  }
  if (host.empty()) return "no host";
  if (host.find_first_of(" \t\\\"<>{}|^`") != std::string_view::npos) return "the host holds a character a host cannot";
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos)
      return "port '" + std::string(port) + "' is not a number";
    const int n = std::stoi(std::string(port));
    if (n < 1 || n > 65535) return "port " + std::string(port) + " is not in 1-65535";
  }
  return {};
}

}  // namespace kvsweep::http
