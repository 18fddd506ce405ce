#pragma once
/// The "corpus" of a probe config (kld, longkl): a text file (relative to the config's folder), the
/// built-in English text ({"builtin": "english"}) or the random-bodies generator
/// ({"random_bodies": {…}}), read and checked with file and key.

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/corpus/random_bodies.hpp"
#include "kvsweep/probe/input_file.hpp"
#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

struct CorpusConfig {
  std::filesystem::path file;
  std::optional<InputFile> input;  // the file's path and sha256, part of the run's identity
  std::string bytes;               // the file as read and hashed
  std::optional<corpus::RandomBodiesOptions> generated;
  bool english() const { return !input && !generated; }
  /// The text itself: the file's bytes, the generated corpus or the built-in English text.
  std::string text() const;
  /// What an item's spec names it by: the file's path, the generator's main knobs, or the built-in
  /// text with its sha256 (a kvsweep whose built-in text changed makes other items).
  nlohmann::json spec() const;
};

/// Which corpus a config without "corpus" gets.
enum class CorpusDefault { english, random_bodies };

/// The probe config's "corpus" key; `generator` holds the generator's defaults for this probe.
/// Fails (core::FatalError) naming the file and key.
CorpusConfig read_corpus_config(const nlohmann::json& probe_config, const ConfigSource& site,
                                const corpus::RandomBodiesOptions& generator, CorpusDefault fallback);

}  // namespace kvsweep::probe
