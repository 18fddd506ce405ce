#pragma once
/// What authenticates kvsweep to a server it attaches to: a bearer token (server.api_key_env)
/// and the user:password a URL may carry. Kept apart from the URL so that nothing written
/// (manifest, logs, records, messages) ever holds them.

#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::http {

class Client;

struct Credentials {
  std::string token;     // Authorization: Bearer
  std::string user;      // Authorization: Basic, from the URL's userinfo
  std::string password;
  /// Sets them on `client`: the bearer token when there is one, else basic auth (no-op when empty).
  void apply(Client& client) const;
};

/// The key a server launched with `args` wants: --api-key K or --api_key K (the first of a comma list) or the
/// first line of --api-key-file F; empty credentials when neither is given.
Credentials credentials_from_args(const std::vector<std::string>& args);

/// A URL split into the URL without userinfo and the user:password it carried (RFC 3986
/// §3.2.1; percent-encoding in them is decoded).
struct SplitUrl {
  std::string url;
  std::string user;
  std::string password;
};
SplitUrl split_userinfo(std::string_view url);

/// What is wrong with a server URL (without userinfo): "" when it is scheme http or https, a
/// host, an optional numeric port 1-65535 and an optional path; else what is wrong with it.
std::string url_problem(std::string_view url);

}  // namespace kvsweep::http
