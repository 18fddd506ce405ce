// The one cell key: the id rule (file-name safe), the label, the group, the JSON form records and
// manifests hold, ordering, "K/V" parsing; and that every layer's cell carries the same key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/summary.hpp"
#include "kvsweep/server/backend.hpp"
#include "kvsweep/sweep/plan/plan.hpp"

namespace core = kvsweep::core;
using json = nlohmann::json;

TEST(CellKey, IdLabelGroupWithAndWithoutVariant) {
  const core::CellKey plain{"tiny", "", "q8_0", "f16"};
  EXPECT_EQ(plain.id(), "tiny-q8_0-f16");
  EXPECT_EQ(plain.label(), "tiny/q8_0/f16");
  EXPECT_EQ(plain.group(), "tiny");
  EXPECT_EQ(plain.types(), "q8_0/f16");
  const core::CellKey variant{"copy", "rot-off", "q4_0", "q4_0"};
  EXPECT_EQ(variant.id(), "copy-rot-off-q4_0-q4_0");
  EXPECT_EQ(variant.label(), "copy/rot-off/q4_0/q4_0");
  EXPECT_EQ(variant.group(), "copy/rot-off");
}

TEST(CellKey, IdReplacesEveryCharacterAFileNameMustNotHold) {
  // A model named like a path or with spaces: the id is one path component, the label keeps the name.
  const core::CellKey key{"org/model 7b:q4", "ctx=8k", "f16", "f16"};
  EXPECT_EQ(key.id(), "org_model_7b_q4-ctx_8k-f16-f16");
  EXPECT_EQ(key.label(), "org/model 7b:q4/ctx=8k/f16/f16");
}

TEST(CellKey, JsonRoundTripOmitsAnEmptyVariant) {
  const core::CellKey plain{"tiny", "", "q8_0", "f16"};
  EXPECT_EQ(plain.to_json(), (json{{"model", "tiny"}, {"type_k", "q8_0"}, {"type_v", "f16"}}));
  EXPECT_EQ(core::CellKey::from_json(plain.to_json()), plain);
  const core::CellKey variant{"copy", "rot-off", "q4_0", "f16"};
  EXPECT_EQ(variant.to_json()["variant"], "rot-off");
  EXPECT_EQ(core::CellKey::from_json(variant.to_json()), variant);
  // Extra fields (a manifest's cell) are ignored; missing or non-string fields read "".
  EXPECT_EQ(core::CellKey::from_json(json{{"model", "m"}, {"type_k", 4}, {"id", "x"}}), (core::CellKey{"m", "", "", ""}));
  EXPECT_EQ(core::CellKey::from_json(json::array()), core::CellKey{});
}

TEST(CellKey, KeysDifferInAnyFieldAndOrderTotally) {
  std::set<core::CellKey> keys{{"m", "", "f16", "f16"}, {"m", "v", "f16", "f16"}, {"m", "", "q8_0", "f16"},
                               {"m", "", "f16", "q8_0"}, {"n", "", "f16", "f16"}, {"m", "", "f16", "f16"}};
  EXPECT_EQ(keys.size(), 5u);
}

TEST(KvPair, ParsesKSlashVAndRejectsAnythingElse) {
  const auto pair = core::KvPair::parse("q8_0/f16");
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->type_k, "q8_0");
  EXPECT_EQ(pair->type_v, "f16");
  EXPECT_EQ(pair->text(), "q8_0/f16");
  EXPECT_FALSE(core::KvPair::parse("q8_0"));
  EXPECT_FALSE(core::KvPair::parse("/f16"));
  EXPECT_FALSE(core::KvPair::parse("q8_0/"));
  EXPECT_EQ(core::KvPair{}, (core::KvPair{"f16", "f16"}));
}

TEST(CellKey, EveryLayersCellHoldsTheSameKey) {
  const core::CellKey key{"copy", "rot-off", "q4_0", "f16"};
  kvsweep::sweep::Cell cell{key, "/models/copy.gguf", false, false};
  kvsweep::server::CellSpec spec;
  EXPECT_EQ(spec.pair(), core::KvPair{});  // a spec nobody set runs f16/f16
  spec.set_key(cell.key());
  kvsweep::probe::CellInfo info;
  info.set_key(cell.key());
  kvsweep::report::CellDef def;
  def.set_key(core::CellKey::from_json(cell.to_json()));
  kvsweep::report::SummaryCell summary;
  summary.set_key(def.key());
  for (const core::CellKey* k : {&cell.key(), &spec.key(), &info.key(), &def.key(), &summary.key()}) {
    EXPECT_EQ(*k, key);
    EXPECT_EQ(k->id(), "copy-rot-off-q4_0-f16");
  }
  EXPECT_EQ(spec.model_path, "");  // set_key sets the key only
}
