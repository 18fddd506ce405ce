#include "kvsweep/server/outcome.hpp"

#include <array>
#include <utility>

namespace kvsweep::server {

namespace {

constexpr std::array<std::pair<CellOutcome, std::string_view>, 11> kNames = {{
    {CellOutcome::pending, "pending"},
    {CellOutcome::ok, "ok"},
    {CellOutcome::kv_unverified, "kv_unverified"},
    {CellOutcome::items_failed, "items_failed"},
    {CellOutcome::unsupported, "unsupported"},
    {CellOutcome::load_failed, "load_failed"},
    {CellOutcome::crashed, "crashed"},
    {CellOutcome::wedged, "wedged"},
    {CellOutcome::config_mismatch, "config_mismatch"},
    {CellOutcome::skipped, "skipped"},
    {CellOutcome::cancelled, "cancelled"},
}};

}  // namespace

std::string_view to_string(CellOutcome outcome) {
  for (const auto& [o, name] : kNames)
    if (o == outcome) return name;
  return "unknown";
}

std::optional<CellOutcome> parse_outcome(std::string_view name) {
  for (const auto& [o, n] : kNames)
    if (n == name) return o;
  return std::nullopt;
}

bool ran(CellOutcome outcome) {
  return outcome == CellOutcome::ok || outcome == CellOutcome::kv_unverified || outcome == CellOutcome::skipped;
}

}  // namespace kvsweep::server
