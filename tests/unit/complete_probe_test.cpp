// The `complete` probe against a fake server (no network): what it declares and what it emits.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/complete/complete.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/server/api.hpp"
#include "fake_api.hpp"
#include "metric_declarations.hpp"

namespace kvsweep::probe {
namespace {

using nlohmann::json;
using kvsweep::testing::FakeApi;

/// A server that answers every completion with `content`.
FakeApi answering(const std::string& content) {
  return FakeApi([&content](const server::CompletionRequest&, int) {
    server::CompletionResponse out;
    out.content = content;
    out.timings.predicted_n = 7;
    return out;
  });
}

TEST(CompleteProbe, DeclaresExactlyTheMetricsItEmitsOnTheReferenceAndOnACell) {
  auto probe = make_complete_probe({{"kind", "complete"}, {"prompts", {"Once upon a time"}}},
                                   ConfigSource{{"t.json", "probes[0]"}, "/nonexistent"});
  std::string content = "a story";
  FakeApi api = answering(content);
  CellInfo ref;
  ref.is_reference = true;
  Context ref_ctx{api, ref};
  auto on_ref = probe->run(probe->items().at(0), ref_ctx);
  ASSERT_TRUE(on_ref) << on_ref.error().message;
  testing::expect_declarations_match(*probe, on_ref->metrics);

  Record ref_record;
  ref_record.item = probe->items().at(0).key;
  ref_record.status = probe::ItemStatus::ok;
  ref_record.response = on_ref->response;
  ref_record.metrics = on_ref->metrics;
  const std::vector<Record> reference = {ref_record};
  content = "a storm";
  CellInfo cell;
  Context ctx{api, cell, nullptr, &reference};
  auto on_cell = probe->run(probe->items().at(0), ctx);
  ASSERT_TRUE(on_cell) << on_cell.error().message;
  testing::expect_declarations_match(*probe, on_cell->metrics);
  EXPECT_EQ(on_cell->metrics["match_reference"], 0);
  EXPECT_EQ(on_cell->metrics["common_prefix_chars"], 6);  // "a stor"

  EXPECT_TRUE(probe->deterministic());
  const auto specs = probe->metrics();
  EXPECT_EQ(find_metric(specs, "match_reference")->kind, MetricKind::binary);
  EXPECT_EQ(find_metric(specs, "predicted_n")->role, MetricRole::diagnostic);
  EXPECT_EQ(find_metric(specs, "predicted_n")->direction, Direction::none);
  EXPECT_FALSE(find_metric(specs, "predicted_n")->is_judged());
  // The manifest entry carries the declarations.
  const json entry = manifest_entry(*probe);
  EXPECT_EQ(entry["deterministic"], true);
  EXPECT_EQ(entry["metrics"][2], (json{{"name", "predicted_n"}, {"direction", "none"}, {"kind", "count"},
                                       {"role", "diagnostic"}, {"higher_is_better", true}}));
}

TEST(CompleteProbe, ACellItemTheReferenceDidNotAnswerFailsInsteadOfBeingRecordedOkWithoutItsComparison) {
  auto probe = make_complete_probe({{"kind", "complete"}, {"prompts", {"Once upon a time"}}},
                                   ConfigSource{{"t.json", "probes[0]"}, "/nonexistent"});
  const std::string content = "a story";
  FakeApi api = answering(content);
  CellInfo cell;
  const Item item = probe->items().at(0);
  Record failed;  // the reference's item failed: no ok answer to compare with
  failed.item = item.key;
  failed.set_status("error");
  const std::vector<Record> none, only_failed = {failed};
  for (const std::vector<Record>* reference : {static_cast<const std::vector<Record>*>(nullptr), &none, &only_failed}) {
    Context ctx{api, cell, nullptr, reference};
    auto r = probe->run(item, ctx);
    ASSERT_FALSE(r) << "an ok record without match_reference: " << r->metrics.dump();
    EXPECT_THAT(r.error().message, ::testing::HasSubstr("no ok answer of the reference cell for item " + item.key));
  }
}

TEST(MetricSpec, RoundTripsThroughJsonAndNamesWhatIsWrong) {
  const MetricSpec spec = quality("mean_kl", Direction::lower_better, MetricKind::continuous);
  const json j = to_json(spec);
  EXPECT_TRUE(has_declaration(j));
  auto back = metric_spec_from_json(j, "here");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->name, "mean_kl");
  EXPECT_EQ(back->direction, Direction::lower_better);
  EXPECT_EQ(back->kind, MetricKind::continuous);
  EXPECT_EQ(back->role, MetricRole::quality);

  // An older manifest's entry is not a declaration.
  EXPECT_FALSE(has_declaration(json{{"name", "x"}, {"higher_is_better", true}}));
  json bad = j;
  bad["kind"] = "ordinal";
  auto err = metric_spec_from_json(bad, "manifest.json: probes.kld.metrics[0]");
  ASSERT_FALSE(err);
  EXPECT_EQ(err.error().message,
            "manifest.json: probes.kld.metrics[0]: metric mean_kl: kind 'ordinal' is not one of binary, count, continuous");
  EXPECT_FALSE(metric_spec_from_json(json{{"direction", "higher"}}, "x"));
}

}  // namespace
}  // namespace kvsweep::probe

namespace kvsweep::probe {

TEST(ProbeGate, AGateNamesQualityMetricsOfTheProbeOnceAndIsCheckedWhereItIsRead) {
  const ConfigSource site{{"t.json", "probes[0]"}, "/nonexistent"};
  const auto with_gate = [](nlohmann::json gate) {
    return nlohmann::json{{"kind", "complete"}, {"prompts", {"Once upon a time"}}, {"gate", std::move(gate)}};
  };
  // A valid gate is taken off the config the kind reads (its own keys are checked as before).
  EXPECT_EQ(make_probe(with_gate({"match_reference"}), site)->kind(), "complete");
  const auto message = [&](nlohmann::json gate) {
    try {
      make_probe(with_gate(std::move(gate)), site);
    } catch (const core::FatalError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message({"match_referenc"}), ::testing::HasSubstr("t.json: probes[0].gate[0]: 'match_referenc' is not a "
                                                                "quality metric of complete (did you mean 'match_reference'?)"));
  EXPECT_THAT(message({"match_reference", "match_reference"}), ::testing::HasSubstr("probes[0].gate[1]: 'match_reference' is named twice"));
  EXPECT_THAT(message(nlohmann::json::array()), ::testing::HasSubstr("probes[0].gate: expected a non-empty array"));
  EXPECT_THAT(message("match_reference"), ::testing::HasSubstr("probes[0].gate: expected a non-empty array"));
}

}  // namespace kvsweep::probe
