#pragma once
/// What changed between a baseline run and this one, read from their manifests: the cells' effective
/// settings (what each server's log said it did), the context, the server build, the models' sha256,
/// the servers' environment and arguments, the kvsweep that ran them. compare prints it above its
/// checks, so a regression comes with what may explain it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::sweep {
struct RunIdentity;
}

namespace kvsweep::report {

enum class ChangeArea { host, setting, context, server, model, env, args, kvsweep, embedder, input };
std::string_view to_string(ChangeArea area);

/// One thing that differs; `before` and `after` as the manifests hold them (nullopt: absent, unset, or
/// not reported), values of secret-looking variables as recorded ("<redacted>").
struct ManifestChange {
  ChangeArea area = ChangeArea::setting;
  /// host: "" (what llama.cpp computed on: sweep::describe_compute); setting: the effective key (type_k, type_v, flash_attn, attn_rot_k, attn_rot_v, n_ctx, path);
  /// context: "n_ctx"; server: a key of the backend's description (version, binary, …); model: the
  /// model's name; env: the variable; input: "probe 'P' KEY PATH" (a file a probe read); args, kvsweep
  /// and embedder (the telephone embedder's model): "".
  std::string name;
  std::string variant;               // env, args, server: the variant's own ("" the server's)
  std::vector<std::string> cells;    // setting: the cells (ids, as compare's table names them) it changed in, in the baseline's order
  std::size_t cells_compared = 0;    // setting: the cells both runs hold whose servers reported settings
  std::optional<std::string> before;
  std::optional<std::string> after;
};

/// The host's compute as llama.cpp reported it (Manifest::compute, else read from the cells); null: unknown.
nlohmann::json compute_of(const sweep::Manifest& manifest);

/// Whether the two runs computed on different hosts as llama.cpp reported them: both known and unequal.
/// A deterministic metric then moves with the host's rounding, not with the K/V setting (compare calls
/// such a change inconclusive).
bool compute_differs(const sweep::Manifest& baseline, const sweep::Manifest& current);

/// Every difference, in the order: the host's compute (when both runs recorded it), effective settings (one change per key and values, with the cells it
/// holds for), environment (the recorded `server_env` when both manifests have it, else the config's
/// server.env) and arguments (the server's, then each variant's), n_ctx, the server's description (and each
/// variant's own binary's), the models' sha256, kvsweep's version; then, when both runs' identities are
/// given (sweep::read_identity, run directories only), what only the identity holds: the embedder's
/// model and each probe's input files (as sweep::check_identity compares them: sweep::changed_inputs).
/// Empty when nothing differs. Cells are paired by key (model, variant, type_k, type_v); a cell only one
/// run holds is not a change here.
std::vector<ManifestChange> manifest_changes(const sweep::Manifest& baseline, const sweep::Manifest& current,
                                             const sweep::RunIdentity* baseline_identity = nullptr,
                                             const sweep::RunIdentity* current_identity = nullptr);

/// One line, "what: before → after": "attn_rot_k in tiny-q4_0-f16: on → off", "env
/// LLAMA_ATTN_ROT_DISABLE: unset → 1", "model tiny sha256: 5fd6df6e7e8f → 1996269170e4".
std::string explain(const ManifestChange& change);

/// "What changed since the baseline (baseline → this run):" and a list of explain() lines; nothing
/// when `changes` is empty.
void manifest_changes_section(Document& doc, const std::vector<ManifestChange>& changes);

}  // namespace kvsweep::report
