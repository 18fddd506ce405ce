// `--only`: clauses that each hold at once, alternatives within a value and across repeated --only,
// the reference cell kept for the cells it is compared with, and names checked against the grid.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/config/config.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/sweep/plan/filter_check.hpp"
#include "kvsweep/sweep/plan/plan.hpp"

using ::testing::HasSubstr;

namespace kvsweep::sweep {
namespace {

using json = nlohmann::json;

/// Two models, K f16/q8_0/q4_0 over V f16, listed order; probes complete and recall.
config::Config two_models() {
  const json d = {{"models", {{{"name", "a"}, {"path", "/models/a.gguf"}}, {{"name", "b"}, {"path", "/models/b.gguf"}}}},
                  {"grid", {{"k", {"f16", "q8_0", "q4_0"}}, {"v", {"f16"}}, {"order", "as-listed"}}},
                  {"probes", {{{"kind", "complete"}}}}};
  return config::from_json(d, "sweep.json");
}

std::vector<std::string> selected(const Filter& filter) {
  std::vector<Cell> cells = grid_cells(two_models());
  select_cells(cells, filter);
  std::vector<std::string> out;
  for (const auto& c : cells) out.push_back(c.label() + (c.is_reference ? " ref" : ""));
  return out;
}

std::string refusal(const std::vector<std::string>& only) {
  try {
    check_filter(parse_filter(only), two_models(), {"complete", "recall"});
  } catch (const core::FatalError& e) {
    return e.what();
  }
  return "";
}

TEST(OnlyFilter, KeepsTheReferenceOfEachSelectedCellsModel) {
  EXPECT_EQ(selected(parse_filter({"k=q4_0"})),
            (std::vector<std::string>{"a/f16/f16 ref", "a/q4_0/f16", "b/f16/f16 ref", "b/q4_0/f16"}));
  // A model term: the other model's reference has no cell to compare with, so it does not run.
  EXPECT_EQ(selected(parse_filter({"model=b,k=q4_0"})), (std::vector<std::string>{"b/f16/f16 ref", "b/q4_0/f16"}));
  EXPECT_EQ(selected(parse_filter({})).size(), 6u);
}

TEST(OnlyFilter, AlternativesWithinAValueAndAcrossRepeatedOnlyAreOr) {
  const std::vector<std::string> both{"a/f16/f16 ref", "a/q8_0/f16", "a/q4_0/f16"};
  EXPECT_EQ(selected(parse_filter({"model=a,k=q4_0|q8_0"})), both);
  EXPECT_EQ(selected(parse_filter({"model=a,k=q4_0", "model=a,k=q8_0"})), both);
  EXPECT_THROW(parse_filter({"k=q4_0|"}), core::FatalError);
  EXPECT_THROW(parse_filter({"kk=q4_0"}), core::FatalError);
}

TEST(OnlyFilter, AProbeTermAppliesToItsClausesCellsAndTheirReference) {
  const Filter f = parse_filter({"k=q4_0,probe=recall", "k=q8_0,probe=complete"});
  Cell ref;
  ref.model = "a";
  ref.type_k = ref.type_v = "f16";
  ref.is_reference = true;
  Cell q4 = ref;
  q4.type_k = "q4_0";
  q4.is_reference = false;
  EXPECT_TRUE(f.matches(q4, "recall"));
  EXPECT_FALSE(f.matches(q4, "complete"));
  // The reference answers every probe some clause compares a cell on.
  EXPECT_TRUE(f.matches(ref, "recall"));
  EXPECT_TRUE(f.matches(ref, "complete"));
  EXPECT_FALSE(f.matches(ref, "telephone"));
}

TEST(OnlyFilter, EachClauseIsCheckedAgainstTheGrid) {
  EXPECT_THAT(refusal({"k=q4_0|q4"}), HasSubstr("--only k=q4: no such K type 'q4'"));
  EXPECT_THAT(refusal({"k=q4_0", "k=q4_0,cell=f16/f16"}), HasSubstr("--only k=q4_0,cell=f16/f16: selects no cell"));
  EXPECT_EQ(refusal({"k=q4_0|q8_0", "model=b,probe=recall"}), "");
}

}  // namespace
}  // namespace kvsweep::sweep
