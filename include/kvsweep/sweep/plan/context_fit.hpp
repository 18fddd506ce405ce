#pragma once
/// A probe whose prompt does not fit a cell's context: how many tokens it needs, and the message
/// that stops the sweep before the model's other cells start (a grid that cannot fit fails once).

#include <optional>
#include <string>

#include "kvsweep/core/error.hpp"

namespace kvsweep::sweep {

struct ContextShortfall {
  std::string probe;       // the probe's name in the run
  std::string kind;        // its kind (the remedy differs: recall shrinks the corpus)
  long long needed = 0;    // tokens its prompt and answer need; 0 when nothing said how many
  int n_ctx = 0;           // the context the cell had
  bool variant_ctx = false;  // the cell's context came from its variant's `ctx`
};

/// The tokens an exceeds_context error's request needs: its `tokens_needed` (recall's preflight,
/// toolcall's length plus answer budget), else what llama-server's own "request (N tokens) exceeds the
/// available context size" says; 0 when neither tells.
long long tokens_needed(const core::Error& error);

/// The smallest context that holds `needed` tokens, rounded up to a multiple of 2048 (a round
/// number a user can type; llama-server rounds -c to 256 itself).
long long suggested_ctx(long long needed);

/// Widens `into` by one failed item (the largest need of a probe wins); a new shortfall when empty.
void note_shortfall(std::optional<ContextShortfall>& into, ContextShortfall item);

/// "recall needs 137,621 tokens of context; raise server.ctx to at least 139,264 or shrink the corpus";
/// without a count: "recall does not fit a context of 1,024 tokens; raise server.ctx or …".
std::string shortfall_message(const ContextShortfall& s);

/// 137621 → "137,621".
std::string with_thousands(long long n);

}  // namespace kvsweep::sweep
