// A URL's userinfo is split off before the URL is used or written anywhere (RFC 3986 §3.2.1).

#include <gtest/gtest.h>

#include "kvsweep/http/credentials.hpp"

namespace {

using kvsweep::http::split_userinfo;

TEST(SplitUserinfo, UserAndPasswordLeaveTheUrl) {
  auto s = split_userinfo("https://alice:s3cr%40t@llm.example.org:8443/v1?x=1");
  EXPECT_EQ(s.url, "https://llm.example.org:8443/v1?x=1");
  EXPECT_EQ(s.user, "alice");
  EXPECT_EQ(s.password, "s3cr@t");
}

TEST(SplitUserinfo, UserWithoutPassword) {
  auto s = split_userinfo("http://bob@127.0.0.1:8080");
  EXPECT_EQ(s.url, "http://127.0.0.1:8080");
  EXPECT_EQ(s.user, "bob");
  EXPECT_EQ(s.password, "");
}

TEST(SplitUserinfo, AnAtInThePathOrQueryIsNotUserinfo) {
  auto s = split_userinfo("http://127.0.0.1:8080/models/a@b?who=c@d");
  EXPECT_EQ(s.url, "http://127.0.0.1:8080/models/a@b?who=c@d");
  EXPECT_EQ(s.user, "");
  EXPECT_EQ(s.password, "");
}

TEST(SplitUserinfo, APasswordHoldingAnAtSignSplitsAtTheLastOne) {
  auto s = split_userinfo("http://u:p@ss@host:1");
  EXPECT_EQ(s.url, "http://host:1");
  EXPECT_EQ(s.user, "u");
  EXPECT_EQ(s.password, "p@ss");
}

}  // namespace
