#pragma once
/// How a cell ended (DESIGN.md "Cell outcomes"); the manifest, the summary table and the
/// report carry its name.

#include <optional>
#include <string_view>

namespace kvsweep::server {

enum class CellOutcome {
  pending,          // not run (yet), or interrupted: resume runs it
  ok,               // every item ran against a server whose log showed the K/V types asked for
  kv_unverified,    // the items ran, but the server's log held no KV cache line: the types are unchecked
  items_failed,     // the server ran, but every item it was given failed (e.g. the prompt exceeds the context)
  unsupported,      // the server refused the configuration at load
  load_failed,      // the server did not come up (died, never ready, bad model)
  crashed,          // died mid-probe again after one restart, or the restart failed
  wedged,           // no answer within the request timeout: killed
  config_mismatch,  // the log shows K/V types other than requested
  skipped,          // every item already recorded by an earlier invocation
  cancelled,        // interrupted while starting (never written: the cell stays pending)
};

std::string_view to_string(CellOutcome outcome);
std::optional<CellOutcome> parse_outcome(std::string_view name);

/// True for the outcomes whose items ran against a working server (ok, kv_unverified, skipped).
bool ran(CellOutcome outcome);

}  // namespace kvsweep::server
