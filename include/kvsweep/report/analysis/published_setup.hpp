#pragma once
/// What a published grid was measured with (its `setup` block) and what a run was, in one field
/// list: read from a published file, filled from a run's manifest, written by the export, and set
/// side by side field by field before any number is compared.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::report {

/// A probe as the setup states it: its name in the run, its kind, items per cell and its settings
/// (the config's keys: hops, tokens, chunks, …), compared key by key.
struct PublishedProbeSetup {
  std::string name;
  std::string kind;
  std::size_t items = 0;  // 0: not stated
  nlohmann::json params = nlohmann::json::object();
};

/// A setup: what every figure depends on beyond the cell. An empty string or 0 is "not stated".
struct PublishedSetup {
  std::string model;         // its name (or how the document names it)
  std::string model_sha256;  // the GGUF's sha256: the model's identity where given
  std::string quantisation;  // of the weights
  std::string backend;       // llama-server, ollama, external…
  std::string build;         // the server's build (llama.cpp commit, Ollama version)
  std::string host;          // the host class in words: cores, CPU family and model, VM, AMX…
  std::string compute;       // what llama.cpp reported it computed on (sweep::describe_compute)
  double context = 0;        // tokens of the server's context ("262K" reads as 262000)
  std::string embedder;      // the telephone probe's embedding model
  std::string embedder_sha256;
  int lines = 0;             // recall's answer length
  std::vector<PublishedProbeSetup> probes;
  nlohmann::json details = nlohmann::json::object();  // prose for people; never compared

  const PublishedProbeSetup* probe(std::string_view name_or_kind) const;
};

/// The setup's string fields, one list: key, member. Reading, writing and comparing walk it.
struct SetupField {
  const char* key;
  std::string PublishedSetup::*member;
};
const std::vector<SetupField>& setup_fields();

/// Reads a `setup` object strictly (unknown keys fail with a did-you-mean; `details` is free).
PublishedSetup parse_setup(const nlohmann::json& setup, const config::Site& site);
/// The setup as a published file holds it (fields not stated are left out).
nlohmann::json setup_json(const PublishedSetup& setup);

/// A run's setup from its manifest: the first model (name, sha256), the backend's build and
/// description, the host (cores and CPU) and llama.cpp's compute, n_ctx, the embedder, each probe with
/// its config's settings.
PublishedSetup run_setup(const sweep::Manifest& manifest);

/// A variant's settings as the run's config states them ({env, args}); null when the run has no such variant.
nlohmann::json variant_settings(const sweep::Manifest& manifest, const std::string& variant);

/// One field of the two setups: differs, the file does not state it, or both state it in words that
/// cannot be compared (the host class, where llama.cpp's compute is not given on both sides).
struct SetupDifference {
  enum class Kind { differs, not_stated, unchecked };
  Kind kind = Kind::differs;
  std::string field;      // "model", "build", "probe kld: chunks", "variant rot-on: env LLAMA_ATTN_ROT_DISABLE"
  std::string published;  // as stated ("" when not stated)
  std::string run;
};

/// Field by field: model (by sha256 where both give one, else by name), quantisation, backend, build,
/// host class (llama.cpp's compute where both give it, else the words), context, embedder, answer lines,
/// then each published probe the run also has (by name, else by kind): items and every setting both
/// state. A field the file does not state is listed as not stated when the run knows it.
std::vector<SetupDifference> setup_differences(const PublishedSetup& published, const PublishedSetup& run);

}  // namespace kvsweep::report
