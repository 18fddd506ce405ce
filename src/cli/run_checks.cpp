#include "kvsweep/cli/run_checks.hpp"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "kvsweep/core/clock.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/sweep/plan/plan.hpp"
#include "kvsweep/sweep/run/runner.hpp"
#include "kvsweep/sweep/store/growth.hpp"
#include "kvsweep/sweep/store/run_identity.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::cli {

namespace {

/// Why a field the resume reads has another type in `m` ("" when none has): each would read as absent.
std::string mistyped_for_resume(const sweep::Manifest& m) {
  auto identity = sweep::read_identity(m);
  if (!identity) return identity.error().message;
  if (const auto* f = m.mistyped("config_file"))
    return "config_file: got " + std::string(f->type_name()) + ", expected a string";
  if (const auto* s = m.mistyped("shard"))
    return "shard: got " + s->dump().substr(0, 40) + ", expected {\"index\": I, \"count\": N}";
  return "";
}

}  // namespace

std::optional<sweep::Manifest> manifest_to_resume(const std::string& run_dir, bool have_config) {
  const std::filesystem::path manifest_path = std::filesystem::path(run_dir) / "manifest.json";
  auto manifest = sweep::RunStore::read_manifest(run_dir);
  // The outcomes journal is read as strictly: a line of another type would rebuild its cell wrongly.
  if (!manifest && manifest.error().kind == core::ErrorKind::invalid)
    throw core::FatalError("--resume " + run_dir + ": " + manifest.error().message);
  if (manifest) {
    if (const std::string bad = mistyped_for_resume(*manifest); !bad.empty())
      throw core::FatalError("--resume " + run_dir + ": " + manifest_path.string() + ": " + bad +
                             "; the run cannot be checked against what would run now: start a new run with "
                             "-o NEW_DIR");
    return std::move(*manifest);
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(run_dir, ec)) {
    if (have_config) return std::nullopt;
    throw core::FatalError("--resume " + run_dir + ": no such run directory; start a run with: kvsweep run CONFIG -o " +
                           run_dir);
  }
  // Records without the manifest that says what made them (its config hash, models, inputs): a config
  // given now cannot be told from the one they were made with (max_tokens is in no record).
  const auto records = std::filesystem::path(run_dir) / "records.jsonl";
  if (std::filesystem::exists(records, ec) && std::filesystem::file_size(records, ec) > 0)
    throw core::FatalError("--resume " + run_dir + ": the run holds records but no readable manifest.json (" +
                           manifest.error().message + "), so what made them (config, models, input files) cannot "
                           "be told and nothing can be added to them; start a new run with: kvsweep run CONFIG -o "
                           "NEW_DIR (or restore " + manifest_path.string() + ")");
  if (have_config) return std::nullopt;
  if (!std::filesystem::exists(manifest_path, ec))
    throw core::FatalError("--resume " + run_dir + ": the run has no manifest.json (it stopped before writing one, so "
                           "nothing of it can be read back); start it again with: kvsweep run CONFIG --resume " + run_dir);
  throw core::FatalError("--resume " + run_dir + ": " + manifest.error().message +
                         "; pass the config to resume it anyway: kvsweep run CONFIG --resume " + run_dir);
}

namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "\n  " + l;
  return out;
}

/// How a resume refuses a changed part of the run's identity: what changed, and what to do instead.
std::pair<std::string, std::string> refusal(sweep::IdentityPart part) {
  using P = sweep::IdentityPart;
  const std::string fresh = "start a new run with -o NEW_DIR";
  switch (part) {
    case P::model: return {"a model file changed since the run started", "a changed model is a new run: " + fresh + " (or restore the model file)"};
    case P::embedder:
      return {"the embedder's model changed since the run started",
              "telephone's similarities are measured with one instrument: " + fresh + " (or restore the embedder's model)"};
    case P::input:
      return {"an input file changed since the run started",
              "the items would be scored against answers to the old inputs: " + fresh + " (or restore the file)"};
    case P::server_env:
      return {"the servers would start with another environment than the run's cells did (from the manifest's server_env)",
              "cells of one run share one environment (llama.cpp reads these): set it back as the run had it, or " + fresh};
    case P::server_build:
      return {"",
              "cells of two builds are not one run: use the first build, " + fresh + ", or pass --allow-build-change to "
              "continue anyway (recorded in the manifest)"};
    case P::config: break;
  }
  return {"the config changed", fresh};
}

}  // namespace

ResumeIdentity check_resume_identity(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                                     const sweep::Manifest& previous, const nlohmann::json& server,
                                     bool allow_build_change, const std::string& run_dir) {
  auto was = sweep::read_identity(previous);  // checked readable by manifest_to_resume
  if (!was) throw core::FatalError("--resume " + run_dir + ": manifest.json: " + was.error().message);
  auto now = sweep::current_identity(config, probes, server, environ);
  if (!now) throw core::FatalError(config.file.string() + ": models: " + now.error().message);
  ResumeIdentity out{now->models, ""};
  const auto changes = sweep::check_identity(*was, *now, "when the run started", "now");
  using P = sweep::IdentityPart;
  if (allow_build_change && !sweep::lines_of(changes, P::server_build).empty()) out.build_changed_from = was->server_build;
  std::string refused;
  for (const P part : {P::server_build, P::model, P::embedder, P::input, P::server_env}) {
    if (part == P::server_build && allow_build_change) continue;
    const auto lines = sweep::lines_of(changes, part);
    if (lines.empty()) continue;
    const auto [what, instead] = refusal(part);
    // The build in one sentence: both builds are the change.
    refused += part == P::server_build ? "\nthe run started with " + was->server_build + ", this one would run " +
                                             now->server_build + " (KVSWEEP_LLAMA_BIN or server.binary changed?)\n" + instead
                                       : "\n" + what + ":" + joined(lines) + "\n" + instead;
  }
  if (!refused.empty()) throw core::FatalError("--resume " + run_dir + ": the run is not the one it started as:" + refused);
  return out;
}

namespace {


/// What this config asks: its grid's cells and each probe's items with their specs.
struct Asked {
  std::set<core::CellKey> cells;
  std::map<std::string, std::map<std::string, nlohmann::json>> items;  // probe -> item key -> its spec
};

Asked asked_by(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes) {
  Asked a;
  for (const auto& c : sweep::grid_cells(config)) a.cells.insert(static_cast<const core::CellKey&>(c));
  for (const auto& p : probes)
    for (const auto& item : p->items()) a.items[p->name()][item.key] = item.spec;
  return a;
}

/// Why `r` could not have been written by the config that asks `a`; "" when it could.
std::string misfit(const probe::Record& r, const Asked& a) {
  const core::CellKey& cell = r.cell;
  const std::string& probe = r.probe;
  const std::string& item = r.item;
  if (!a.cells.contains(cell)) return "cell " + cell.label() + " is not in this config's grid";
  const auto p = a.items.find(probe);
  if (p == a.items.end()) return "probe '" + probe + "' is not in this config";
  const auto i = p->second.find(item);
  if (i == p->second.end()) return "item " + probe + "/" + item + " is not one of this config's";
  // The item's spec (its prompt, function, seed…) as the record stored it: same key, other content.
  if (!r.spec.is_null() && r.spec != i->second)
    return "item " + probe + "/" + item + " asks something else in this config (its spec differs)";
  return "";
}

/// The run's records; a FatalError when they cannot be read.
std::vector<probe::Record> records_of(const std::string& run_dir) {
  auto records = sweep::RunStore::read_records(run_dir);
  if (!records) throw core::FatalError("--resume " + run_dir + ": " + records.error().message);
  return std::move(*records);
}


}  // namespace

nlohmann::json check_growth(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                            const sweep::Manifest& previous, const std::string& run_dir) {
  const std::string before_hash = previous.config_hash.value_or("");
  const std::string now_hash = config::config_hash(config);
  if (before_hash.empty() || before_hash == now_hash) return nullptr;
  const std::string refused = "--resume " + run_dir + ": the config changed since the run started (hash " + before_hash +
                              " → " + now_hash + ")";
  const std::string instead = "\na resumed run may only grow (more items, cells, models, variants or probes; "
                              "docs/configuration.md, \"Growing a run\"): restore the config, or start a new run with -o NEW_DIR";
  if (!previous.config.is_object())
    throw core::FatalError(refused + ", and its manifest does not record the config it ran, so what changed cannot "
                           "be told; start a new run with -o NEW_DIR");
  const sweep::Growth growth = sweep::compare_for_growth(previous.config, sweep::record_form(config));
  if (!growth.changed.empty())
    throw core::FatalError(refused + ", in ways that are not growth:" + joined(growth.changed) + instead);
  // Items of one run share one context: a longer new item that raises it would make the cells differ.
  const int n_ctx = sweep::planned_context_size(config, probes);
  if (previous.n_ctx && *previous.n_ctx != n_ctx)
    throw core::FatalError(refused + ": its cells ran with a context of " + std::to_string(*previous.n_ctx) +
                           " tokens, the grown config needs " + std::to_string(n_ctx) +
                           " (set server.ctx to the run's, or start a new run with -o NEW_DIR)");
  const std::vector<probe::Record> records = records_of(run_dir);
  // A run made without variants has cells of no variant; a config with variants has only its variants'
  // cells (grid_cells). Its records would belong to no cell of the grown run: neither run again nor
  // reported. Refused here, before the record-by-record check, in those words.
  const auto& before_variants = previous.config.value("variants", nlohmann::json::array());
  if (!config.variants.empty() && (!before_variants.is_array() || before_variants.empty()) && !records.empty())
    throw core::FatalError(
        refused + ": the run was made without variants, and this config adds its first (" + config.variants.front().name +
        (config.variants.size() > 1 ? ", …" : "") + "): a config with variants has only its variants' cells, so the "
        "run's " + std::to_string(records.size()) + " records (cells of no variant, like " + records.front().cell.label() +
        ") would belong to no cell of it. A run grows by variants only when it already has variants. Start a new run "
        "with -o NEW_DIR whose variants include one with no settings for what this run measured (e.g. {\"name\": "
        "\"base\"}) beside the new ones (docs/configuration.md, \"Growing a run\")");
  const Asked asked = asked_by(config, probes);
  for (const auto& r : records) {
    if (const std::string why = misfit(r, asked); !why.empty())
      throw core::FatalError(refused + ": a record of the run would not be kept: " + why + instead);
  }
  return {{"from_config_hash", before_hash}, {"to_config_hash", now_hash}, {"added", growth.added},
          {"at", core::iso8601(std::chrono::system_clock::now())}};
}

}  // namespace kvsweep::cli
