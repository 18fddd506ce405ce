// Filler text for long prompts: each kind has its shape, is seeded, mixes no digits into words,
// and carries a note as one unit in its style at the depth asked.

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/corpus/filler.hpp"
#include "generated_text.hpp"

using ::testing::HasSubstr;

namespace {

using kvsweep::corpus::FillerKind;
using kvsweep::testing::count;
using kvsweep::testing::mixed_words;

TEST(Filler, KindsHaveTheirShapeAndNoMixedWords) {
  using kvsweep::corpus::make_filler;
  auto code = make_filler({FillerKind::code, 20000, 5});
  auto prose = make_filler({FillerKind::prose, 20000, 5});
  auto logs = make_filler({FillerKind::logs, 20000, 5});
  EXPECT_GT(count(code.text, "def "), 20u);
  EXPECT_GT(count(code.text, "# file: src/"), 3u);
  EXPECT_EQ(count(prose.text, "def "), 0u);
  EXPECT_GT(count(logs.text, "\n2026-03-"), 100u);
  for (const auto* f : {&code, &prose, &logs}) {
    EXPECT_LE(f->text.size(), 20000u);
    EXPECT_GT(f->text.size(), 19000u);
    EXPECT_EQ(f->note_offset, std::string::npos);
    EXPECT_EQ(mixed_words(f->text), std::vector<std::string>{});
  }
  // Seeded: the same options give the same bytes, another seed other bytes.
  EXPECT_EQ(make_filler({FillerKind::logs, 20000, 5}).text, logs.text);
  EXPECT_NE(make_filler({FillerKind::logs, 20000, 6}).text, logs.text);
  EXPECT_EQ(kvsweep::corpus::parse_filler_kind("prose"), FillerKind::prose);
  EXPECT_FALSE(kvsweep::corpus::parse_filler_kind("poetry"));
}

TEST(Filler, NoteIsOneUnitInTheKindsStyleAtItsDepth) {
  using kvsweep::corpus::make_filler;
  const std::string note = "OPS-1234: look at services/a-7f2a/b for \"x\".";
  auto code = make_filler({FillerKind::code, 10000, 3}, note, 0.3);
  ASSERT_NE(code.note_offset, std::string::npos);
  EXPECT_EQ(code.text.substr(code.note_offset, 12), "# OPS-1234: ");
  EXPECT_NEAR(static_cast<double>(code.note_offset) / 10000.0, 0.3, 0.08);
  EXPECT_LE(code.text.size(), 10000u);
  auto logs = make_filler({FillerKind::logs, 10000, 3}, note, 0.5);
  const std::string line = logs.text.substr(logs.note_offset, logs.text.find('\n', logs.note_offset) - logs.note_offset);
  EXPECT_THAT(line, HasSubstr(" WARN  ops-notes[1] " + note)) << line;
  // Too little room: the note alone.
  auto tiny = make_filler({FillerKind::prose, 10, 3}, note, 0.5);
  EXPECT_EQ(tiny.text, note + "\n\n");
  EXPECT_EQ(tiny.units, 0u);
}

}  // namespace
