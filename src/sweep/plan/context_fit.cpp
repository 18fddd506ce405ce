#include "kvsweep/sweep/plan/context_fit.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <utility>

namespace kvsweep::sweep {

namespace {

/// The number at the start of `text` and the rest after it; nullopt when `text` does not start with digits.
std::optional<std::pair<long long, std::string_view>> leading_number(std::string_view text) {
  long long n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc()) return std::nullopt;
  return std::pair{n, text.substr(static_cast<std::size_t>(end - text.data()))};
}

}  // namespace

long long tokens_needed(const core::Error& error) {
  // kvsweep's own probes say it as a field (recall, toolcall: core::exceeds_context).
  if (error.tokens_needed > 0) return error.tokens_needed;
  // llama-server says it only in English, the one message read here: "request (N tokens) exceeds the
  // available context size (M tokens), try increasing it".
  const std::string_view m = error.message;
  if (const auto at = m.find("request ("); at != std::string_view::npos) {
    const auto n = leading_number(m.substr(at + 9));
    if (n && n->second.starts_with(" tokens)")) return n->first;
  }
  return 0;
}

long long suggested_ctx(long long needed) { return (needed + 2047) / 2048 * 2048; }

void note_shortfall(std::optional<ContextShortfall>& into, ContextShortfall item) {
  if (!into) {
    into = std::move(item);
    return;
  }
  into->needed = std::max(into->needed, item.needed);
}

std::string with_thousands(long long n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string shortfall_message(const ContextShortfall& s) {
  const std::string key = s.variant_ctx ? "the variant's ctx" : "server.ctx";
  const std::string remedy = s.kind == "recall" ? "shrink the corpus" : "shorten its prompts";
  if (s.needed <= 0)
    return s.probe + " does not fit a context of " + with_thousands(s.n_ctx) + " tokens; raise " + key + " or " + remedy;
  return s.probe + " needs " + with_thousands(s.needed) + " tokens of context; raise " + key + " to at least " +
         with_thousands(suggested_ctx(s.needed)) + " or " + remedy;
}

}  // namespace kvsweep::sweep
