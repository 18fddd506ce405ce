// Slot environment templates (--slot-env, sweep.slot_env) and the sweep section of a config.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/config/config.hpp"
#include "kvsweep/config/slot_env.hpp"
#include "kvsweep/core/error.hpp"
#include "config_error.hpp"

using ::testing::HasSubstr;

namespace config = kvsweep::config;
using json = nlohmann::json;

namespace {

using kvsweep::testing::config_error;

std::string parse_error(const std::string& text) {
  auto e = config::parse_slot_env(text);
  return e ? "" : e.error().message;
}

json config_with(const json& sweep) {
  return {{"models", {{{"name", "tiny"}, {"path", "/models/tiny.gguf"}}}},
          {"grid", {{"k", {"f16", "q8_0"}}, {"v", "same-as-k"}}},
          {"probes", {{{"kind", "complete"}}}},
          {"sweep", sweep}};
}

}  // namespace

TEST(SlotEnv, ExpandsEveryPlaceholderPerSlot) {
  auto cuda = config::parse_slot_env("CUDA_VISIBLE_DEVICES={slot}");
  ASSERT_TRUE(cuda) << cuda.error().message;
  EXPECT_EQ(cuda->name, "CUDA_VISIBLE_DEVICES");
  auto pair = config::parse_slot_env("GPUS={slot},{slot}");  // '=' after the first belongs to the value
  auto fixed = config::parse_slot_env("OMP_NUM_THREADS=4");
  auto eq = config::parse_slot_env("X=a=b");
  ASSERT_TRUE(pair && fixed && eq);
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(config::expand_slot_env({*cuda, *pair, *fixed, *eq}, 1),
            (Env{{"CUDA_VISIBLE_DEVICES", "1"}, {"GPUS", "1,1"}, {"OMP_NUM_THREADS", "4"}, {"X", "a=b"}}));
  EXPECT_EQ(config::expand_slot_env({*cuda}, 12), (Env{{"CUDA_VISIBLE_DEVICES", "12"}}));
  EXPECT_EQ(config::expand_slot_env({}, 0), Env{});
}

TEST(SlotEnv, BadTemplatesSayWhatIsWrong) {
  EXPECT_THAT(parse_error("CUDA_VISIBLE_DEVICES"), HasSubstr("expected NAME=TEMPLATE"));
  EXPECT_THAT(parse_error("={slot}"), HasSubstr("is not an environment variable name"));
  EXPECT_THAT(parse_error("1GPU={slot}"), HasSubstr("'1GPU' is not an environment variable name"));
  EXPECT_THAT(parse_error("A-B={slot}"), HasSubstr("not an environment variable name"));
  std::string typo = parse_error("CUDA_VISIBLE_DEVICES={slots}");
  EXPECT_THAT(typo, HasSubstr("unknown placeholder '{slots}'")) << typo;
  EXPECT_THAT(typo, HasSubstr("the only placeholder is {slot}")) << typo;
  EXPECT_THAT(parse_error("X={SLOT}"), HasSubstr("unknown placeholder '{SLOT}'"));
  EXPECT_THAT(parse_error("X={slot"), HasSubstr("an unclosed '{'"));
  EXPECT_THAT(parse_error("X=slot}"), HasSubstr("a '}' without '{'"));
  EXPECT_EQ(parse_error("X="), "");  // an empty value is a value
}

TEST(SlotEnv, SecretValuesAreRedactedInRecords) {
  EXPECT_TRUE(config::is_secret_env_name("OPENAI_API_KEY"));
  EXPECT_TRUE(config::is_secret_env_name("hf_token"));
  EXPECT_FALSE(config::is_secret_env_name("CUDA_VISIBLE_DEVICES"));
  EXPECT_EQ(config::env_for_record({{"CUDA_VISIBLE_DEVICES", "1"}, {"LLAMA_API_KEY", "sk-123"}}),
            (json{{"CUDA_VISIBLE_DEVICES", "1"}, {"LLAMA_API_KEY", "<redacted>"}}));
}

TEST(SweepConfig, ParallelCellsAndSlotEnvFromTheConfig) {
  auto c = config::from_json(config_with({{"parallel_cells", 2}, {"slot_env", {{"CUDA_VISIBLE_DEVICES", "{slot}"}}}}),
                             "sweep.json");
  EXPECT_EQ(c.sweep.parallel_cells, 2);
  ASSERT_EQ(c.sweep.slot_env.size(), 1u);
  EXPECT_EQ(c.sweep.slot_env[0].value_template, "{slot}");
  // How a sweep is spread over a host does not change its results: same hash as serial.
  auto serial = config::from_json(config_with(json::object()), "sweep.json");
  EXPECT_EQ(serial.sweep.parallel_cells, 1);
  EXPECT_EQ(config::config_hash(c), config::config_hash(serial));
  EXPECT_EQ(config::to_json(c)["sweep"]["parallel_cells"], 2);
  EXPECT_FALSE(config::to_json(serial).contains("sweep"));
}

TEST(SweepConfig, ErrorsNameTheFileAndTheKey) {
  EXPECT_EQ(config_error(config_with({{"parallel_cells", 0}})), "sweep.json: sweep.parallel_cells: must be >= 1");
  std::string typo = config_error(config_with({{"paralel_cells", 2}}));
  EXPECT_THAT(typo, HasSubstr("sweep.json: sweep")) << typo;
  EXPECT_THAT(typo, HasSubstr("parallel_cells")) << typo;
  std::string bad = config_error(config_with({{"slot_env", {{"CUDA_VISIBLE_DEVICES", "{gpu}"}}}}));
  EXPECT_THAT(bad, HasSubstr("sweep.json: sweep.slot_env.CUDA_VISIBLE_DEVICES: ")) << bad;
  EXPECT_THAT(bad, HasSubstr("unknown placeholder '{gpu}'")) << bad;
  EXPECT_THAT(config_error(config_with({{"slot_env", {{"X", 1}}}})), HasSubstr("sweep.slot_env.X: expected a string"));
  EXPECT_THAT(config_error(config_with({{"slot_env", "CUDA_VISIBLE_DEVICES={slot}"}})), HasSubstr("expected an object"));
  auto ext = config_with({{"parallel_cells", 2}});
  ext["server"] = {{"backend", "external"}, {"url", "http://127.0.0.1:8080"}};
  EXPECT_THAT(config_error(ext), HasSubstr("sweep.parallel_cells: needs backend \"llama-server\""));
}

TEST(SweepConfig, AdaptiveIsOffByDefaultOnWithItsSectionAndOutsideTheHash) {
  const auto plain = config::from_json(config_with(json::object()), "sweep.json");
  EXPECT_FALSE(plain.sweep.adaptive.enabled);
  const auto on = config::from_json(config_with({{"adaptive", {{"min_items", 6}, {"alpha", 0.01}, {"futility", 0.2}, {"seed", 9}}}}),
                                    "sweep.json");
  EXPECT_TRUE(on.sweep.adaptive.enabled);
  EXPECT_EQ(on.sweep.adaptive.min_items, 6);
  EXPECT_EQ(on.sweep.adaptive.alpha, 0.01);
  EXPECT_EQ(on.sweep.adaptive.futility, 0.2);
  EXPECT_EQ(plain.sweep.adaptive.futility, 0.1);
  EXPECT_EQ(on.sweep.adaptive.seed, 9u);
  EXPECT_FALSE(config::from_json(config_with({{"adaptive", {{"enabled", false}}}}), "sweep.json").sweep.adaptive.enabled);
  // Which items run is not what they answer: `--resume` without --adaptive must accept the run.
  EXPECT_EQ(config::config_hash(on), config::config_hash(plain));
  EXPECT_EQ(config::to_json(on)["sweep"]["adaptive"]["min_items"], 6);
  EXPECT_EQ(config::to_json(on)["sweep"]["adaptive"]["futility"], 0.2);  // a resumed run keeps it
  EXPECT_FALSE(config::to_json(plain).contains("sweep"));
}

TEST(SweepConfig, AdaptiveErrorsNameTheFileAndTheKey) {
  EXPECT_EQ(config_error(config_with({{"adaptive", {{"min_items", 1}}}})),
            "sweep.json: sweep.adaptive.min_items: must be between 2 and 1000000, got 1");
  EXPECT_THAT(config_error(config_with({{"adaptive", {{"alpha", 0.9}}}})),
              HasSubstr("sweep.json: sweep.adaptive.alpha: must be in (0, 0.5]"));
  EXPECT_EQ(config_error(config_with({{"adaptive", {{"futility", 1.5}}}})),
            "sweep.json: sweep.adaptive.futility: must be at least 0 and at most 1, got 1.5");
  const std::string typo = config_error(config_with({{"adaptive", {{"min_item", 3}}}}));
  EXPECT_THAT(typo, HasSubstr("sweep.json: sweep.adaptive")) << typo;
  EXPECT_THAT(typo, HasSubstr("did you mean 'min_items'?")) << typo;
  EXPECT_THAT(config_error(config_with({{"adaptive", true}})), HasSubstr("sweep.json: sweep.adaptive"));
}
