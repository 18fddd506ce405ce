// The toolcall probe's config: defaults, and errors that name the file and the key.

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/toolcall/toolcall.hpp"

using ::testing::HasSubstr;

namespace {

using kvsweep::core::FatalError;
using kvsweep::corpus::FillerKind;
using kvsweep::probe::ConfigSource;
using kvsweep::probe::ToolcallMode;
using nlohmann::json;

ConfigSource site() { return {{"sweep.json", "probes[0]"}, "/tmp"}; }

std::string config_error(const json& cfg) {
  try {
    (void)kvsweep::probe::parse_toolcall_config(cfg, site());
  } catch (const FatalError& e) {
    return e.message;
  }
  return "(no error)";
}

TEST(ToolcallConfig, Defaults) {
  auto o = kvsweep::probe::parse_toolcall_config({{"kind", "toolcall"}}, site());
  EXPECT_EQ(o.name, "toolcall");
  EXPECT_EQ(o.lengths, (std::vector<int>{2048, 8192}));
  EXPECT_EQ(o.seeds, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(o.filler, FillerKind::code);
  EXPECT_EQ(o.mode, ToolcallMode::json);
  EXPECT_EQ(o.max_tokens, 256);
  EXPECT_EQ(o.tools, static_cast<int>(kvsweep::probe::toolcall_catalogue().size()));
}

TEST(ToolcallConfig, ErrorsNameFileAndKey) {
  EXPECT_EQ(config_error({{"kind", "toolcall"}, {"lenghts", {2048}}}).rfind("sweep.json: probes[0]", 0), 0u);
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"lenghts", {2048}}}), HasSubstr("lengths"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"filler", "prosa"}}),
              HasSubstr("probes[0].filler: unknown value 'prosa' (did you mean 'prose'?)"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"mode", "tools"}}),
              HasSubstr("probes[0].mode: unknown value 'tools' (one of: json, native)"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"lengths", json::array()}}),
              HasSubstr("probes[0].lengths: expected a non-empty list"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"lengths", {2048, "8k"}}}),
              HasSubstr("probes[0].lengths[1]: expected an integer"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"lengths", {2048, 2048}}}),
              HasSubstr("lengths[1]: 2048 is listed twice"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"seeds", {1, -2}}}),
              HasSubstr("probes[0].seeds[1]: expected a non-negative"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"tools", 0}}), HasSubstr("probes[0].tools: expected 1 … 12"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"max_tokens", 0}}), HasSubstr("probes[0].max_tokens: must be >= 1"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"chat_template_kwargs", "off"}}),
              HasSubstr("chat_template_kwargs: expected an object"));
  // Twelve tool schemas do not fit in 512 tokens; two do.
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"lengths", {512, 2048}}}),
              HasSubstr("probes[0].lengths[0]: 512 tokens leave no room for filler"));
  EXPECT_EQ(config_error({{"kind", "toolcall"}, {"lengths", {512, 1024}}, {"tools", 2}}), "(no error)");
  // The registry knows the kind.
  auto probe = kvsweep::probe::make_probe({{"kind", "toolcall"}, {"lengths", {1024}}, {"tools", 4}}, site());
  EXPECT_EQ(probe->kind(), "toolcall");
}

}  // namespace
