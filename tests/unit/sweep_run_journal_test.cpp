// The manifest while a run writes it (sweep::RunJournal): each ended cell journaled once, before the
// manifest that holds it; cells an invocation does not touch kept; a manifest that lost cells rebuilt
// from the journal when the run is opened again; a write that fails returned, never thrown.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kvsweep/sweep/run/run_journal.hpp"
#include "kvsweep/sweep/store/run_store.hpp"
#include "full_disk.hpp"
#include "temp_file.hpp"

namespace kvsweep::sweep {
namespace {

CellResult result(const std::string& type_k, server::CellOutcome outcome, int items_ok, bool reference = false) {
  CellResult r;
  r.cell.model = "tiny";
  r.cell.type_k = type_k;
  r.cell.type_v = "f16";
  r.cell.is_reference = reference;
  r.outcome = outcome;
  r.items_ok = items_ok;
  return r;
}

std::filesystem::path fresh_dir() {
  const auto dir = kvsweep::testing::temp_file("_run");
  std::filesystem::remove_all(dir);
  return dir;
}

/// manifest.json as the file holds it, without the journal folded in.
Manifest manifest_on_disk(const std::filesystem::path& dir) {
  std::ifstream in(dir / "manifest.json");
  auto m = Manifest::from_json(nlohmann::json::parse(in, nullptr, false));
  EXPECT_TRUE(m);
  return m.value_or(Manifest{});
}

/// One invocation of a run: the run directory opened (created when new), its manifest opened, the
/// results folded in with `status`. Returns update()'s error.
std::string invocation(const std::filesystem::path& dir, const std::vector<CellResult>& results,
                       const std::string& status) {
  auto store = std::filesystem::exists(dir) ? RunStore::open(dir) : RunStore::create(dir);
  EXPECT_TRUE(store) << store.error().message;
  RunJournal run(*store);
  run.open();
  return run.update(results, status);
}

const ManifestCell* find_cell(const Manifest& m, const std::string& type_k) {
  for (const auto& c : m.cell_list())
    if (c.type_k == type_k) return &c;
  return nullptr;
}

TEST(RunJournal, EachEndedCellIsJournaledOnceAndAPendingOneNotAtAll) {
  const auto dir = fresh_dir();
  auto store = RunStore::create(dir);
  ASSERT_TRUE(store) << store.error().message;
  RunJournal run(*store);
  run.open();
  run.manifest().name = "t";

  const std::vector<CellResult> first = {result("f16", server::CellOutcome::ok, 2, true),
                                         result("q4_0", server::CellOutcome::pending, 0)};
  EXPECT_EQ(run.update(first, "running"), "");
  auto journal = RunStore::read_cells(dir);
  ASSERT_TRUE(journal) << journal.error().message;
  ASSERT_EQ(journal->size(), 1u);
  EXPECT_EQ((*journal)[0].type_k, "f16");
  Manifest m = manifest_on_disk(dir);
  EXPECT_EQ(m.name, "t");
  EXPECT_EQ(m.status_text(), "running");
  EXPECT_FALSE(m.finished_at);
  ASSERT_EQ(m.cell_list().size(), 1u);
  EXPECT_EQ(m.cell_list()[0].outcome_text(), "ok");
  EXPECT_TRUE(m.cell_list()[0].reference());

  // The same reference again with the second cell ended: only the new cell joins the journal.
  const std::vector<CellResult> second = {result("f16", server::CellOutcome::ok, 2, true),
                                          result("q4_0", server::CellOutcome::crashed, 1)};
  EXPECT_EQ(run.update(second, "complete"), "");
  journal = RunStore::read_cells(dir);
  ASSERT_TRUE(journal);
  ASSERT_EQ(journal->size(), 2u);
  EXPECT_EQ((*journal)[1].type_k, "q4_0");
  m = manifest_on_disk(dir);
  EXPECT_EQ(m.journaled, 2) << "the manifest holds both entries of the journal";
  EXPECT_EQ(m.status_text(), "complete");
  ASSERT_TRUE(m.finished_at);
  EXPECT_EQ(m.finished_at, m.updated_at);
  ASSERT_NE(find_cell(m, "q4_0"), nullptr);
  EXPECT_EQ(find_cell(m, "q4_0")->outcome_text(), "crashed");
  EXPECT_EQ(find_cell(m, "q4_0")->items_ok, 1);
}

TEST(RunJournal, ALaterInvocationKeepsTheCellsItDoesNotRun) {
  const auto dir = fresh_dir();
  ASSERT_EQ(invocation(dir, {result("f16", server::CellOutcome::ok, 2, true), result("q8_0", server::CellOutcome::ok, 2)},
                       "interrupted"),
            "");
  ASSERT_EQ(invocation(dir, {result("q4_0", server::CellOutcome::load_failed, 0)}, "complete"), "");
  const Manifest m = manifest_on_disk(dir);
  ASSERT_EQ(m.cell_list().size(), 3u);
  EXPECT_EQ(find_cell(m, "f16")->outcome_text(), "ok");
  EXPECT_EQ(find_cell(m, "q8_0")->outcome_text(), "ok");
  EXPECT_EQ(find_cell(m, "q4_0")->outcome_text(), "load_failed");
}

TEST(RunJournal, OpeningARunWhoseManifestLostACellRebuildsItFromTheJournal) {
  const auto dir = fresh_dir();
  ASSERT_EQ(invocation(dir, {result("f16", server::CellOutcome::ok, 2, true), result("q4_0", server::CellOutcome::wedged, 1)},
                       "running"),
            "");
  {
    // A crash between the journal's fsync and the manifest's rename: the manifest holds one cell less.
    auto store = RunStore::open(dir);
    ASSERT_TRUE(store) << store.error().message;
    Manifest lost = manifest_on_disk(dir);
    std::vector<ManifestCell> kept;
    for (const auto& c : lost.cell_list())
      if (c.type_k != "q4_0") kept.push_back(c);
    lost.cells = kept;
    ASSERT_EQ(lost.journaled, 2);
    lost.journaled = 1;  // the manifest before the crash held the journal's first entry only
    ASSERT_TRUE(store->write_manifest(lost));
    ASSERT_EQ(find_cell(manifest_on_disk(dir), "q4_0"), nullptr);
  }
  // The store reads it back with the journal folded in: every reader gets the cell back.
  const auto read = RunStore::read_manifest(dir);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_NE(find_cell(*read, "q4_0"), nullptr);
  EXPECT_EQ(find_cell(*read, "q4_0")->outcome_text(), "wedged");
  auto store = RunStore::open(dir);
  ASSERT_TRUE(store) << store.error().message;
  RunJournal run(*store);
  run.open();
  const ManifestCell* back = find_cell(run.manifest(), "q4_0");
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->outcome_text(), "wedged");
  EXPECT_EQ(back->items_ok, 1);
  EXPECT_NE(find_cell(run.manifest(), "f16"), nullptr);
}

TEST(RunJournal, AWriteThatFailsIsReturnedNotThrown) {
  const auto dir = fresh_dir();
  ASSERT_EQ(invocation(dir, {}, "running"), "");
  std::string error;
  {
    const kvsweep::testing::FullDisk full(0);  // no file may grow: the journal's line cannot be written
    EXPECT_NO_THROW(error = invocation(dir, {result("f16", server::CellOutcome::ok, 2, true)}, "running"));
  }
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace kvsweep::sweep
