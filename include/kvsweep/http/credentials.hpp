#pragma once
/// What authenticates kvsweep to a server it attaches to: a bearer token (server.api_key_env)
/// and the user:password a URL may carry. Kept apart from the URL so that nothing written
/// (manifest, logs, records, messages) ever holds them.

#include <string>
#include <string_view>

namespace kvsweep::http {

class Client;

struct Credentials {
  std::string token;     // Authorization: Bearer
  std::string user;      // Authorization: Basic, from the URL's userinfo
  std::string password;
  /// Sets them on `client`: the bearer token when there is one, else basic auth (no-op when empty).
  void apply(Client& client) const;
};

/// A URL split into the URL without userinfo and the user:password it carried (RFC 3986
/// §3.2.1; percent-encoding in them is decoded).
struct SplitUrl {
  std::string url;
  std::string user;
  std::string password;
};
SplitUrl split_userinfo(std::string_view url);

}  // namespace kvsweep::http
