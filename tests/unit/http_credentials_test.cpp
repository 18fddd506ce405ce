// A URL's userinfo is split off before the URL is used or written anywhere (RFC 3986 §3.2.1).

#include <gtest/gtest.h>

#include "kvsweep/http/credentials.hpp"

namespace {

struct Case {
  const char* given;
  const char* url;
  const char* user;
  const char* password;
};

TEST(SplitUserinfo, UserinfoLeavesTheUrlAndNothingElseDoes) {
  const Case cases[] = {
      // user:password, percent-decoded; the path and query stay.
      {"https://alice:s3cr%40t@llm.example.org:8443/v1?x=1", "https://llm.example.org:8443/v1?x=1", "alice", "s3cr@t"},
      {"http://bob@127.0.0.1:8080", "http://127.0.0.1:8080", "bob", ""},
      // An '@' in the path or query is not userinfo.
      {"http://127.0.0.1:8080/models/a@b?who=c@d", "http://127.0.0.1:8080/models/a@b?who=c@d", "", ""},
      // A raw '@' in the password: the host follows the last one.
      {"http://u:p@ss@host:1", "http://host:1", "u", "p@ss"},
      {"http://127.0.0.1:8080", "http://127.0.0.1:8080", "", ""},
  };
  for (const auto& c : cases) {
    auto s = kvsweep::http::split_userinfo(c.given);
    EXPECT_EQ(s.url, c.url) << c.given;
    EXPECT_EQ(s.user, c.user) << c.given;
    EXPECT_EQ(s.password, c.password) << c.given;
  }
}

}  // namespace
