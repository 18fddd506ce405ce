#pragma once
/// Seeded filler text for long-context probes (code, prose or log lines, in whole units, of about
/// a requested number of characters), with one caller-given note planted at a chosen depth.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::corpus {

enum class FillerKind { code, prose, logs };

std::string_view to_string(FillerKind kind);
/// The kind named `name` ("code", "prose", "logs"), if any.
std::optional<FillerKind> parse_filler_kind(std::string_view name);
/// Every kind's name, for messages and config validation.
std::vector<std::string> filler_kind_names();

/// Characters per token assumed when a length in tokens is turned into characters: a rough
/// average for English text and code under BPE and SentencePiece vocabularies.
inline constexpr double kCharsPerToken = 3.5;

struct FillerOptions {
  FillerKind kind = FillerKind::code;
  std::size_t chars = 0;   // the filler stops before a unit would take it past this length
  std::uint64_t seed = 1;
};

struct Filler {
  std::string text;
  std::size_t units = 0;                       // generated units (functions, paragraphs, log lines), note excluded
  std::size_t note_offset = std::string::npos; // where the note's unit starts in text (npos without a note)
};

/// Filler of whole units: Python functions under `# file:` headers (code), paragraphs of
/// engineering notes (prose) or timestamped service log lines (logs). `note`, when not empty,
/// becomes one extra unit in the kind's own style (a one-line `#` comment, a paragraph, a WARN log line)
/// placed at the unit boundary nearest `depth` × chars (depth in [0, 1]); it counts toward
/// `chars`. The same options and note always give the same bytes: only
/// stats::SplitMix64 and fixed word lists are used. No generated unit holds a word (a run of
/// letters and digits) that mixes digits with letters, such as `7f2a`: a caller that puts such a
/// word in its note's values knows they appear nowhere else.
Filler make_filler(const FillerOptions& options, std::string_view note = {}, double depth = 0.5);

}  // namespace kvsweep::corpus
