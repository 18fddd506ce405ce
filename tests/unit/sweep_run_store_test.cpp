// The run store's guards: one kvsweep per run directory (a flock that a crash cannot leave
// stuck), a bad line in the middle of records.jsonl named by file and line (only a torn last
// line is repaired), and a write that fails for lack of space (RLIMIT_FSIZE: the kernel refuses
// the write as a full disk would) leaving whole lines only, so the next append starts clean.

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/sweep/store/cell_journal.hpp"
#include "kvsweep/sweep/store/run_store.hpp"
#include "full_disk.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;

namespace {

using namespace kvsweep;
namespace kt = kvsweep::testing;

/// A cell entry as the journal takes it; a field of another type rides in `extra` and is written as it was.
sweep::ManifestCell journal_cell(const nlohmann::json& cell) { return *sweep::ManifestCell::from_json(cell); }

nlohmann::json record(const std::string& item, const std::string& status = "ok") {
  return {{"cell", {{"model", "tiny"}, {"type_k", "f16"}, {"type_v", "f16"}}},
          {"probe", "complete"},
          {"item", item},
          {"status", status}};
}

/// The same record as the runner hands it to the store.
probe::Record typed(const std::string& item, const std::string& status = "ok") {
  return *probe::Record::from_json(record(item, status));
}

/// Reading `dir`'s records and opening its store both fail with a message starting `expected`; `dir` is removed.
void expect_refused_from(const std::filesystem::path& dir, const std::string& expected) {
  auto read = sweep::RunStore::read_records(dir);
  ASSERT_FALSE(read) << expected;
  EXPECT_EQ(read.error().message.rfind(expected, 0), 0u) << read.error().message;
  auto open = sweep::RunStore::open(dir);
  ASSERT_FALSE(open) << expected;
  EXPECT_EQ(open.error().message.rfind(expected, 0), 0u) << open.error().message;
  std::filesystem::remove_all(dir);
}

std::filesystem::path fresh_dir() {
  auto dir = kt::temp_file("-run");
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(RunStoreLock, ASecondStoreOnTheSameDirectoryIsRefusedWithTheOwnersPid) {
  auto dir = fresh_dir();
  {
    auto first = sweep::RunStore::create(dir);
    ASSERT_TRUE(first) << first.error().message;
    auto second = sweep::RunStore::open(dir);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().message,
              dir.string() + " is in use by another kvsweep (pid " + std::to_string(::getpid()) + "); wait for it or stop it");
  }
  // Released with the store: a later run may resume it.
  EXPECT_TRUE(sweep::RunStore::open(dir));
}

TEST(RunStoreLock, ALockFileLeftByACrashedRunDoesNotBlock) {
  auto dir = fresh_dir();
  std::filesystem::create_directories(dir);
  std::ofstream(dir / ".kvsweep.lock") << "999999\n";  // what a killed kvsweep leaves: the file, no lock
  auto store = sweep::RunStore::create(dir);
  ASSERT_TRUE(store) << store.error().message;
}

TEST(RunStoreRecords, ABadLineInTheMiddleIsNamedByFileAndLineAndStops) {
  auto dir = fresh_dir();
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "records.jsonl") << record("p0").dump() << "\n\n"
                                       << "{\"cell\": {\"model\": \"tiny\"\n"
                                       << record("p1").dump() << "\n";
  const std::string expected = (dir / "records.jsonl").string() + ": line 3 is not JSON";
  auto read = sweep::RunStore::read_records(dir);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message.rfind(expected, 0), 0u) << read.error().message;
  auto open = sweep::RunStore::open(dir);
  ASSERT_FALSE(open);
  EXPECT_EQ(open.error().message.rfind(expected, 0), 0u) << open.error().message;
  // Nothing was cut: the file is left for the user to fix.
  EXPECT_THAT(kt::slurp(dir / "records.jsonl"), HasSubstr(record("p1").dump()));
}

TEST(RunStoreRecords, OnlyATornLastLineIsRepaired) {
  auto dir = fresh_dir();
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "records.jsonl") << record("p0").dump() << "\n{\"cell\": {\"mod";
  auto store = sweep::RunStore::open(dir);
  ASSERT_TRUE(store) << store.error().message;
  EXPECT_EQ(store->records().size(), 1u);
  EXPECT_GT(store->repaired_bytes(), 0u);
}

TEST(RunStoreRecords, AFailedAppendLeavesWholeLinesAndTheNextAppendStartsClean) {
  auto dir = fresh_dir();
  auto store = sweep::RunStore::create(dir);
  ASSERT_TRUE(store) << store.error().message;
  ASSERT_TRUE(store->append(typed("p0")));
  const auto size = std::filesystem::file_size(dir / "records.jsonl");
  {
    kt::FullDisk full(size + 10);  // room for 10 bytes of the next line
    auto failed = store->append(typed("p1", "timeout"));
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().kind, core::ErrorKind::io);
    EXPECT_THAT(failed.error().message, HasSubstr("cannot append to " + (dir / "records.jsonl").string()))
        << failed.error().message;
  }
  EXPECT_EQ(std::filesystem::file_size(dir / "records.jsonl"), size);
  EXPECT_FALSE(store->has_ok(sweep::triple_key_of(typed("p1"))));
  ASSERT_TRUE(store->append(typed("p1")));
  auto read = sweep::RunStore::read_records(dir);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[1].item, "p1");
}

TEST(RunStoreRecords, ALineThatIsJsonButNotARecordIsNamedByFileAndLine) {
  for (const std::string line : {"42", "[]", "null", "{\"probe\": \"x\"}"}) {
    auto dir = fresh_dir();
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "records.jsonl") << record("p0").dump() << "\n" << line << "\n" << record("p1").dump() << "\n";
    const std::string expected = (dir / "records.jsonl").string() + ": line 2 is not a record";
    expect_refused_from(dir, expected);
  }
}

// A line's status is "ok", "skipped" or the failure's class; the record holds it as ItemStatus with the
// class beside it, and writes back the same word.
TEST(RunStoreRecords, AStatusReadsAsItsItemStatusAndAFailuresClassWritesBackAsItWas) {
  for (const std::string word : {"ok", "skipped", "timeout", "crashed", "http_status", ""}) {
    const auto read = probe::Record::from_json(record("p0", word));
    ASSERT_TRUE(read);
    const probe::ItemStatus expected = word == "ok"        ? probe::ItemStatus::ok
                                       : word == "skipped" ? probe::ItemStatus::skipped
                                                           : probe::ItemStatus::failed;
    EXPECT_EQ(read->status, expected) << word;
    EXPECT_EQ(read->ok(), word == "ok") << word;
    EXPECT_EQ(read->failure, expected == probe::ItemStatus::failed ? word : "") << word;
    EXPECT_EQ(probe::to_json(*read)["status"], word) << word;
  }
}

// A metric of another type ("0", {…}) read as missing made recommend call the cell
// "answered like f16/f16"; any field of another type is an error naming the file, the line and the field.
TEST(RunStoreRecords, ATimingMeasuredByTheClientAndAMetricNotComputedReadBack) {
  // An OpenAI server reports no timings: kvsweep measures them and the record says "measured_by".
  auto dir = fresh_dir();
  std::filesystem::create_directories(dir);
  auto rec = record("p0");
  rec["timings"] = {{"predicted_n", 3}, {"predicted_ms", 12.5}, {"measured_by", "client"}};
  rec["metrics"]["ppl_ratio_se"] = nullptr;  // kld from one chunk: no standard error
  std::ofstream(dir / "records.jsonl") << rec.dump() << "\n";
  auto read = sweep::RunStore::read_records(dir);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->size(), 1u);
  std::filesystem::remove_all(dir);
}

TEST(RunStoreRecords, AFieldOfAnotherTypeIsAnErrorNamingTheFileLineAndField) {
  const std::vector<std::pair<std::string, nlohmann::json>> bad = {
      {"metrics.match_reference: got string \"0\"", {{"match_reference", "0"}}},
      {"metrics.match_reference: got object", {{"match_reference", {{"v", 1}}}}},
      {"metrics: got array", nlohmann::json::array()},
  };
  for (const auto& [expected_field, metrics] : bad) {
    auto dir = fresh_dir();
    std::filesystem::create_directories(dir);
    auto mistyped = record("p1");
    mistyped["metrics"] = metrics;
    std::ofstream(dir / "records.jsonl") << record("p0").dump() << "\n" << mistyped.dump() << "\n";
    const std::string expected = (dir / "records.jsonl").string() + ": line 2: " + expected_field;
    expect_refused_from(dir, expected);
  }
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"status", 1}, {"attempt", "1"}, {"wall_s", "0.5"}, {"timings", {{"predicted_n", "3"}}},
           {"timings", {{"measured_by", 1}}}}) {
    auto dir = fresh_dir();
    std::filesystem::create_directories(dir);
    auto mistyped = record("p0");
    mistyped[field] = value;
    std::ofstream(dir / "records.jsonl") << mistyped.dump() << "\n";
    auto read = sweep::RunStore::read_records(dir);
    ASSERT_FALSE(read) << field;
    EXPECT_THAT(read.error().message, HasSubstr("line 1: " + field)) << read.error().message;
    std::filesystem::remove_all(dir);
  }
}

TEST(RunStoreCells, TheJournalRebuildsCellsAManifestLostAndASkipKeepsTheOutcome) {
  auto dir = fresh_dir();
  auto store = sweep::RunStore::create(dir);
  ASSERT_TRUE(store) << store.error().message;
  auto cell = [](const std::string& k, const std::string& outcome) {
    return nlohmann::json{{"model", "tiny"}, {"type_k", k}, {"type_v", "f16"}, {"outcome", outcome}, {"items_ok", 3}};
  };
  ASSERT_TRUE(store->append_cell(journal_cell(cell("f16", "kv_unverified"))));
  ASSERT_TRUE(store->append_cell(journal_cell(cell("q8_0", "wedged"))));
  ASSERT_TRUE(store->append_cell(journal_cell(cell("q8_0", "ok"))));
  const auto read = sweep::RunStore::read_cells(dir);
  ASSERT_TRUE(read) << read.error().message;
  const auto& journal = *read;
  ASSERT_EQ(journal.size(), 3u);
  // The manifest kept only q8_0 (as wedged): the journal gives f16 back, and q8_0 its last outcome.
  auto cells = sweep::rebuild_cells({*sweep::ManifestCell::from_json(cell("q8_0", "wedged"))}, journal);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].outcome, "ok");
  EXPECT_EQ(cells[1].outcome, "kv_unverified");
  // A resumed cell that only skipped keeps what it had; one with nothing to keep is rebuilt ok.
  sweep::fold_cell(cells, *sweep::ManifestCell::from_json(cell("f16", "skipped")));
  EXPECT_EQ(cells[1].outcome, "kv_unverified");
  sweep::fold_cell(cells, *sweep::ManifestCell::from_json(cell("q4_0", "skipped")));
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells[2].outcome, "ok");
}

TEST(RunStoreCells, AJournalLineWhoseFieldHasAnotherTypeIsAnErrorNamingTheFileAndLineNotMissing) {
  const auto cell = [](const std::string& k) {
    return nlohmann::json{{"model", "tiny"}, {"type_k", k}, {"type_v", "f16"}, {"outcome", "ok"}, {"items_ok", 3}};
  };
  const std::vector<std::pair<std::string, nlohmann::json>> wrong = {
      {"outcome", 3}, {"items_ok", "2"}, {"type_k", 8}, {"is_reference", "yes"}, {"ready_s", "0.5"}};
  for (const auto& [field, value] : wrong) {
    auto dir = fresh_dir();
    {
      auto store = sweep::RunStore::create(dir);
      ASSERT_TRUE(store) << store.error().message;
      ASSERT_TRUE(store->append_cell(journal_cell(cell("f16"))));
      auto bad = cell("q8_0");
      bad[field] = value;
      ASSERT_TRUE(store->append_cell(journal_cell(bad)));
      ASSERT_TRUE(store->append_cell(journal_cell(cell("q4_0"))));
    }
    const auto journal = sweep::RunStore::read_cells(dir);
    ASSERT_FALSE(journal) << field << " of another type was read";
    const std::string& why = journal.error().message;
    EXPECT_NE(why.find((dir / "cells.jsonl").string()), std::string::npos) << why;
    EXPECT_NE(why.find("line 2"), std::string::npos) << why;
    EXPECT_NE(why.find(field + ": got"), std::string::npos) << why;
  }
  // Inside the effective settings too.
  auto dir = fresh_dir();
  {
    auto store = sweep::RunStore::create(dir);
    ASSERT_TRUE(store) << store.error().message;
    auto bad = cell("f16");
    bad["effective"] = {{"found", true}, {"kv_mib", "4"}};
    ASSERT_TRUE(store->append_cell(journal_cell(bad)));
  }
  const auto journal = sweep::RunStore::read_cells(dir);
  ASSERT_FALSE(journal);
  EXPECT_NE(journal.error().message.find("effective.kv_mib: got string"), std::string::npos) << journal.error().message;
}

TEST(RunStoreCells, ATornJournalLineIsLeftOutAndTheLinesAroundItRead) {
  auto dir = fresh_dir();
  const auto cell = [](const std::string& k) {
    return nlohmann::json{{"model", "tiny"}, {"type_k", k}, {"type_v", "f16"}, {"outcome", "ok"}};
  };
  {
    auto store = sweep::RunStore::create(dir);
    ASSERT_TRUE(store) << store.error().message;
    ASSERT_TRUE(store->append_cell(journal_cell(cell("f16"))));
  }
  // A crash mid-append: the last line cut.
  {
    std::ofstream out(dir / "cells.jsonl", std::ios::app);
    out << cell("q8_0").dump().substr(0, 20);
  }
  auto journal = sweep::RunStore::read_cells(dir);
  ASSERT_TRUE(journal) << journal.error().message;
  ASSERT_EQ(journal->size(), 1u);
  // The next run's append closes the torn line first: it stays left out, the new line is read.
  {
    auto store = sweep::RunStore::open(dir);
    ASSERT_TRUE(store) << store.error().message;
    ASSERT_TRUE(store->append_cell(journal_cell(cell("q4_0"))));
  }
  journal = sweep::RunStore::read_cells(dir);
  ASSERT_TRUE(journal) << journal.error().message;
  ASSERT_EQ(journal->size(), 2u);
  EXPECT_EQ((*journal)[1].type_k, "q4_0");
}

TEST(RunStoreLock, TheHolderOfARunDirectorysLockIsKnownToOthers) {
  auto dir = fresh_dir();
  EXPECT_FALSE(sweep::RunStore::lock_holder(dir));
  {
    auto store = sweep::RunStore::create(dir);
    ASSERT_TRUE(store) << store.error().message;
    auto holder = sweep::RunStore::lock_holder(dir);
    ASSERT_TRUE(holder);
    EXPECT_EQ(*holder, std::to_string(::getpid()));
  }
  EXPECT_FALSE(sweep::RunStore::lock_holder(dir));
}

}  // namespace

namespace {

// The runner decides a cell's attention path across the cells after journaling it: the manifest's copy
// holds the decided path, the journal's the cell's own. Reading the manifest back must keep the decided
// one, and still take a journal entry that says something new (a crash before the manifest's rename).
TEST(RunStoreCells, AJournalEntryTheManifestAlreadyHoldsKeepsTheDecidedAttentionPath) {
  const auto cell = [](const std::string& outcome, const std::string& path) {
    return journal_cell({{"model", "tiny"}, {"type_k", "q8_0"}, {"type_v", "q8_0"}, {"outcome", outcome},
                  {"effective", {{"found", true}, {"path", path}, {"path_reason", path + " because"}}}});
  };
  const std::vector<sweep::ManifestCell> manifest = {cell("ok", "fallback")};
  const std::vector<sweep::ManifestCell> same = {cell("ok", "fused")}, newer_entry = {cell("wedged", "fused")};
  auto kept = sweep::rebuild_cells(manifest, same);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].effective->path, "fallback");
  EXPECT_EQ(kept[0].effective->path_reason, "fallback because");
  auto newer = sweep::rebuild_cells(manifest, newer_entry);
  ASSERT_EQ(newer.size(), 1u);
  EXPECT_EQ(newer[0].outcome, "wedged");
  EXPECT_EQ(newer[0].effective->path, "fused");
}

}  // namespace
