// The parallel run's scheduler: a slot takes any
// cell not yet taken, except that a group's other cells wait for its reference cell to end.

#include <gtest/gtest.h>

#include "kvsweep/sweep/run/cell_schedule.hpp"

namespace {

using kvsweep::sweep::Cell;
using kvsweep::sweep::CellSchedule;

Cell cell(const std::string& model, const std::string& k, bool reference) {
  Cell c;
  c.model = model;
  c.type_k = k;
  c.type_v = "f16";
  c.is_reference = reference;
  return c;
}

TEST(CellSchedule, AGroupsCellsWaitForItsReferenceWhileOtherGroupsRun) {
  // Listed before its reference on purpose: the order of the list does not let a cell jump its reference.
  const std::vector<Cell> cells = {cell("a", "q8_0", false), cell("a", "f16", true), cell("b", "f16", true),
                                   cell("b", "q4_0", false)};
  CellSchedule schedule(cells);
  EXPECT_EQ(schedule.take(), 1u) << "a's reference first";
  EXPECT_EQ(schedule.take(), 2u) << "b's reference, while a's runs";
  EXPECT_EQ(schedule.take(), std::nullopt) << "both groups wait for their references";
  EXPECT_FALSE(schedule.all_taken());
  schedule.finished(2);
  EXPECT_EQ(schedule.take(), 3u) << "b's reference ended: its cell may start";
  EXPECT_EQ(schedule.take(), std::nullopt);
  schedule.finished(3);  // not a reference: releases nothing
  EXPECT_EQ(schedule.take(), std::nullopt);
  schedule.finished(1);
  EXPECT_EQ(schedule.take(), 0u);
  EXPECT_TRUE(schedule.all_taken());
  EXPECT_EQ(schedule.take(), std::nullopt);
}

TEST(CellSchedule, WithoutAReferenceCellEveryCellMayStartInOrder) {
  // A shard without its group's reference (the reference is another shard's): nothing waits.
  const std::vector<Cell> cells = {cell("a", "q8_0", false), cell("a", "q4_0", false)};
  CellSchedule schedule(cells);
  EXPECT_EQ(schedule.take(), 0u);
  EXPECT_EQ(schedule.take(), 1u);
  EXPECT_TRUE(schedule.all_taken());
}

}  // namespace
