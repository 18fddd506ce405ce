// The variants axis: reading `variants`, the grid it makes (models × variants × K × V, a reference
// cell per variant), `--only variant=`, and that a config without variants is unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/config/config.hpp"
#include "kvsweep/config/variants.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/sweep/plan/plan.hpp"
#include "kvsweep/sweep/store/run_store.hpp"
#include "config_error.hpp"

using ::testing::HasSubstr;

namespace config = kvsweep::config;
namespace core = kvsweep::core;
namespace sweep = kvsweep::sweep;
using json = nlohmann::json;

namespace {

using kvsweep::testing::config_error;

json doc_with(const json& variants) {
  json d = {{"models", {{{"name", "copy"}, {"path", "/models/copy.gguf"}}}},
            {"grid", {{"k", {"f16", "q4_0"}}, {"v", {"f16"}}, {"order", "as-listed"}}},
            {"probes", {{{"kind", "complete"}}}}};
  if (!variants.is_null()) d["variants"] = variants;
  return d;
}

json rotation() {
  return json::array({{{"name", "rot-on"}, {"env", {{"LLAMA_ATTN_ROT_DISABLE", "0"}}}},
                      {{"name", "rot-off"}, {"env", {{"LLAMA_ATTN_ROT_DISABLE", "1"}}}}});
}

std::vector<std::string> labels(const std::vector<sweep::Cell>& cells) {
  std::vector<std::string> out;
  for (const auto& c : cells) out.push_back(c.label() + (c.is_reference ? " ref" : ""));
  return out;
}

}  // namespace

TEST(Variants, ReadsNameArgsEnvCtxAndBinary) {
  json v = rotation();
  v.push_back({{"name", "fa-off"}, {"args", {"-fa", "off"}}});
  v.push_back({{"name", "ctx32k"}, {"ctx", 32768}});
  v.push_back({{"name", "build-b"}, {"binary", "b/llama-server"}});
  const auto c = config::from_json(doc_with(v), "/cfg/sweep.json");
  ASSERT_EQ(c.variants.size(), 5u);
  EXPECT_EQ(c.variants[1].env, (std::vector<std::pair<std::string, std::string>>{{"LLAMA_ATTN_ROT_DISABLE", "1"}}));
  EXPECT_EQ(c.variants[2].args, (std::vector<std::string>{"-fa", "off"}));
  EXPECT_EQ(c.variants[3].ctx, 32768);
  EXPECT_EQ(c.variants[4].binary, "/cfg/b/llama-server") << "a relative path resolves against the config";
  EXPECT_EQ(config::to_json(c)["variants"][1]["name"], "rot-off");
  EXPECT_EQ(config::find_variant(c, "ctx32k"), &c.variants[3]);
  EXPECT_EQ(config::find_variant(c, ""), nullptr);
}

TEST(Variants, AConfigWithoutThemKeepsItsHashCellsAndRecords) {
  const auto plain = config::from_json(doc_with(nullptr), "sweep.json");
  EXPECT_FALSE(config::to_json(plain).contains("variants"));
  auto with = doc_with(rotation());
  const auto varied = config::from_json(with, "sweep.json");
  EXPECT_NE(config::config_hash(plain), config::config_hash(varied));
  const auto cells = sweep::grid_cells(plain);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[1].to_json(), (json{{"model", "copy"}, {"type_k", "q4_0"}, {"type_v", "f16"}}));
  EXPECT_EQ(cells[1].id(), "copy-q4_0-f16");
  EXPECT_EQ(cells[1].label(), "copy/q4_0/f16");
}

TEST(Variants, TheGridIsModelsTimesVariantsTimesKVWithAReferencePerVariant) {
  const auto c = config::from_json(doc_with(rotation()), "sweep.json");
  EXPECT_EQ(labels(sweep::grid_cells(c)),
            (std::vector<std::string>{"copy/rot-on/f16/f16 ref", "copy/rot-on/q4_0/f16", "copy/rot-off/f16/f16 ref",
                                      "copy/rot-off/q4_0/f16"}));
  // Each variant's reference runs before the cells compared with it.
  EXPECT_EQ(labels(sweep::plan_cells(c, std::nullopt)),
            (std::vector<std::string>{"copy/rot-on/f16/f16 ref", "copy/rot-off/f16/f16 ref", "copy/rot-on/q4_0/f16",
                                      "copy/rot-off/q4_0/f16"}));
  const auto cell = sweep::grid_cells(c)[3];
  EXPECT_EQ(cell.to_json(), (json{{"model", "copy"}, {"variant", "rot-off"}, {"type_k", "q4_0"}, {"type_v", "f16"}}));
  EXPECT_EQ(cell.id(), "copy-rot-off-q4_0-f16");
  EXPECT_EQ(cell.group(), "copy/rot-off");
  EXPECT_NE(core::CellKey::from_json(cell.to_json()), core::CellKey::from_json(sweep::grid_cells(c)[1].to_json()));
  EXPECT_EQ(core::CellKey::from_json(cell.to_json()), cell.key());
  EXPECT_EQ(core::CellKey::from_json(cell.to_json()).label(), "copy/rot-off/q4_0/f16");
  // Shards still partition the grid: every cell in exactly one.
  std::multiset<std::string> owned;
  for (int i = 0; i < 3; ++i) {
    for (const auto& x : sweep::plan_cells(c, sweep::Shard{i, 3}, sweep::ReferenceSupport::skip)) owned.insert(x.label());
  }
  EXPECT_EQ(owned.size(), 4u);
  EXPECT_EQ(std::set<std::string>(owned.begin(), owned.end()).size(), 4u);
}

TEST(Variants, OnlyVariantSelectsOneVariantsCells) {
  const auto c = config::from_json(doc_with(rotation()), "sweep.json");
  const auto filter = sweep::parse_filter({"variant=rot-off,k=q4_0"});
  std::vector<std::string> picked;
  for (const auto& cell : sweep::grid_cells(c))
    if (filter.matches_cell(cell)) picked.push_back(cell.label());
  EXPECT_EQ(picked, (std::vector<std::string>{"copy/rot-off/q4_0/f16"}));
  EXPECT_THROW(sweep::parse_filter({"varient=rot-off"}), kvsweep::core::FatalError);
}

TEST(Variants, ErrorsNameTheFileAndTheKey) {
  EXPECT_EQ(config_error(doc_with(json::array())),
            "sweep.json: variants: expected a non-empty list of {\"name\": …, \"env\"/\"args\"/\"ctx\"/\"binary\": …}");
  EXPECT_EQ(config_error(doc_with({{{"env", {{"A", "1"}}}}})),
            "sweep.json: variants[0].name: missing (a short name, e.g. \"rot-off\")");
  EXPECT_EQ(config_error(doc_with({{{"name", "a"}}, {{"name", "a"}}})),
            "sweep.json: variants[1].name: duplicate variant name 'a'");
  EXPECT_EQ(config_error(doc_with({{{"name", "rot off"}}})),
            "sweep.json: variants[0].name: 'rot off': use letters, digits, '-', '_' and '.' only");
  EXPECT_EQ(config_error(doc_with({{{"name", "small"}, {"args", {"-c", "1024"}}}})),
            "sweep.json: variants[0].args: '-c' is set by kvsweep per cell; use grid / ctx instead");
  EXPECT_EQ(config_error(doc_with({{{"name", "x"}, {"env", {{"A", 1}}}}})), "sweep.json: variants[0].env.A: expected a string");
  EXPECT_EQ(config_error(doc_with({{{"name", "x"}, {"ctx", -1}}})), "sweep.json: variants[0].ctx: must be between 0 and 2147483392, got -1");
  const std::string typo = config_error(doc_with({{{"name", "x"}, {"evn", {{"A", "1"}}}}}));
  EXPECT_THAT(typo, HasSubstr("sweep.json: variants[0]")) << typo;
  EXPECT_THAT(typo, HasSubstr("'env'")) << typo;
  auto external = doc_with(rotation());
  external["server"] = {{"backend", "external"}, {"url", "http://127.0.0.1:8080"}};
  EXPECT_EQ(config_error(external), "sweep.json: variants: backend \"external\" attaches to one running server; "
                                    "variants need kvsweep to start the server per cell");
  auto ollama = doc_with({{{"name", "x"}, {"env", {{"OLLAMA_KV_CACHE_TYPE", "q8_0"}}}}});
  ollama["server"] = {{"backend", "ollama"}};
  ollama["grid"] = {{"k", {"f16"}}, {"v", "tied"}};
  ollama["models"] = {{{"name", "m"}, {"path", "qwen3:0.6b"}}};
  EXPECT_EQ(config_error(ollama), "sweep.json: variants[0].env.OLLAMA_KV_CACHE_TYPE: is set by kvsweep per cell; "
                                  "use grid (cache type) / ctx instead");
}
