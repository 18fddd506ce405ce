#include "kvsweep/probe/telephone/telephone.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "kvsweep/score/cosine.hpp"

namespace kvsweep::probe {

namespace {

// ---------------------------------------------------------------------------------------
// Scoring helpers
// ---------------------------------------------------------------------------------------

// score::cosine_similarity answers 0 for a zero vector and NaN for mismatched sizes or
// non-finite elements; here each of those is an error, never a similarity: a zero vector
// scored 0 would read as "drifted completely" (issue 4 asks for a clear error).
core::Expected<double> similarity(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) {
    return core::fail(core::ErrorKind::invalid, "embedding dimensions differ (" + std::to_string(a.size()) +
                                                    " vs " + std::to_string(b.size()) + ")");
  }
  const auto is_zero = [](const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0f; });
  };
  if (is_zero(a) || is_zero(b)) return core::fail(core::ErrorKind::invalid, "zero-norm embedding");
  const double cos = score::cosine_similarity(a, b);
  if (std::isnan(cos)) return core::fail(core::ErrorKind::invalid, "embedding holds a NaN or infinite value");
  return cos;
}

core::Expected<std::vector<float>> embed_one(Embedder& embedder, const std::string& text) {
  auto reply = embedder.embed({text});
  if (!reply) {
    core::Error e = reply.error();
    e.message = "embedder: " + e.message;
    return std::unexpected(std::move(e));
  }
  if (reply->size() != 1) {
    return core::fail(core::ErrorKind::parse,
                      "embedder: " + std::to_string(reply->size()) + " vectors for 1 input");
  }
  return std::move(reply->front());
}

/// Errors that describe the server (down, wedged) or the user (interrupt): always returned,
/// so the runner can restart or stop, never folded into a partial chain.
bool is_server_state(core::ErrorKind kind) {
  return kind == core::ErrorKind::connect || kind == core::ErrorKind::timeout ||
         kind == core::ErrorKind::cancelled;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view space = " \t\r\n\f\v";
  const auto first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(space);
  return s.substr(first, last - first + 1);
}

/// An item's spec: a string text and a seed that fits 32 bits.
bool spec_ok(const nlohmann::json& spec) {
  return spec.is_object() && spec.contains("text") && spec["text"].is_string() && spec.contains("seed") &&
         spec["seed"].is_number_integer() &&
         (spec["seed"].is_number_unsigned() || spec["seed"].get<long long>() >= 0) &&
         spec["seed"].get<unsigned long long>() <= 0xFFFFFFFFull;
}

/// The request of one hop: the message in the template, every sampling field, the hop's seed, and
/// (budget_factor > 0) a budget relative to the message's own length in tokens, when counted.
server::CompletionRequest hop_request(const TelephoneConfig& config, const std::string& message,
                                      std::optional<std::size_t> message_tokens, std::uint32_t chain_seed, int hop) {
  server::CompletionRequest request;
  const std::string rendered = render_template(config.template_text, message);
  if (config.mode == TelephoneMode::chat) {
    if (config.system) request.messages.push_back({"system", *config.system});
    request.messages.push_back({"user", rendered});
    if (config.suppress_thinking) {
      request.extra["chat_template_kwargs"] = {{"enable_thinking", false}};
    }
  } else {
    request.prompt = rendered;
  }
  request.n_predict = config.max_tokens;
  if (config.budget_factor > 0) {
    // Relative budget: the input's own length in tokens bounds the answer.
    if (message_tokens) {
      const double budget = config.budget_factor * static_cast<double>(*message_tokens) + config.budget_plus;
      request.n_predict = std::min(config.max_tokens, std::max(1, static_cast<int>(budget)));
    }
  }
  request.temperature = config.temperature;
  request.seed = telephone_hop_seed(chain_seed, hop);
  request.top_k = config.top_k;
  request.top_p = config.top_p;
  request.min_p = config.min_p;
  request.n_probs = 0;
  request.cache_prompt = true;
  return request;
}

/// The chain's metrics from each completed hop's similarity to the original (completed >= 1).
nlohmann::json chain_metrics(const std::vector<double>& similarities, double threshold, int empty_hops, int cut_hops) {
  const int completed = static_cast<int>(similarities.size());
  int first_below = completed + 1;
  for (int i = 0; i < completed; ++i) {
    if (similarities[static_cast<std::size_t>(i)] < threshold) {
      first_below = i + 1;
      break;
    }
  }
  return {
      {"final_similarity", similarities.back()},
      {"mean_similarity", std::accumulate(similarities.begin(), similarities.end(), 0.0) / completed},
      {"min_similarity", *std::min_element(similarities.begin(), similarities.end())},
      {"first_below_threshold", first_below},
      {"empty_hops", empty_hops},
      {"cut_hops", cut_hops},
  };
}

}  // namespace

std::uint32_t telephone_hop_seed(std::uint32_t chain_seed, int hop) {
  constexpr std::uint64_t modulus = 0xFFFFFFFFull;  // 2^32 - 1: never yields 0xFFFFFFFF
  const std::uint64_t offset = hop > 1 ? static_cast<std::uint64_t>(hop - 1) : 0;
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(chain_seed) + offset) % modulus);
}

std::string strip_think_block(std::string_view text) {
  constexpr std::string_view open = "<think>";
  constexpr std::string_view close = "</think>";
  std::string_view rest = trim(text);
  if (rest.starts_with(open)) {
    const std::size_t end = rest.find(close);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + close.size());
  }
  return std::string(trim(rest));
}

// -----------------------------------------------------------------------------------------
// The probe
// -----------------------------------------------------------------------------------------

struct TelephoneProbe::TokenCounts {
  std::mutex mutex;  // cells may run in parallel (--parallel-cells)
  std::map<std::pair<std::string, std::string>, std::size_t> counts;  // (model path, text) -> tokens

  /// The number of tokens of `text` (no special tokens), asking the server only for a new text.
  core::Expected<std::size_t> count(server::Api& api, const std::string& model, const std::string& text) {
    auto key = std::make_pair(model, text);
    {
      std::lock_guard lock(mutex);
      if (auto it = counts.find(key); it != counts.end()) return it->second;
    }
    auto tokens = api.tokenize(text, false);
    if (!tokens) return std::unexpected(tokens.error());
    std::lock_guard lock(mutex);
    counts.emplace(std::move(key), tokens->size());
    return tokens->size();
  }
};

TelephoneProbe::TelephoneProbe(TelephoneConfig config)
    : m_config(std::move(config)), m_counts(std::make_shared<TokenCounts>()) {}

std::vector<Item> TelephoneProbe::items() const {
  std::vector<Item> out;
  out.reserve(m_config.texts.size() * m_config.seeds.size());
  for (std::size_t t = 0; t < m_config.texts.size(); ++t) {
    for (std::uint32_t seed : m_config.seeds) {
      out.push_back(Item{"t" + std::to_string(t) + "-s" + std::to_string(seed),
                         nlohmann::json{{"text", m_config.texts[t]}, {"seed", seed}}});
    }
  }
  return out;
}

int TelephoneProbe::min_context() const {
  std::size_t longest = 0;
  for (const auto& text : m_config.texts) longest = std::max(longest, text.size());
  const auto max_tokens = static_cast<std::size_t>(m_config.max_tokens);
  const std::size_t bound = m_config.template_text.size() + std::max(longest, max_tokens) + max_tokens +
                            (m_config.system ? m_config.system->size() : 0) + 256;
  return static_cast<int>(std::min<std::size_t>(bound, std::numeric_limits<int>::max()));
}

std::vector<MetricSpec> TelephoneProbe::metrics() const {
  // Quality: how much of the original text survived the chain, scored against that text (ground truth):
  // the last hop's similarity (seed 000's measure) and the mean over hops. min_similarity follows the
  // final one hop for hop on a short chain and first_below_threshold rests on a chosen threshold: both
  // are reported, never gated (a verdict needs every gated metric non-inferior; four correlated ones
  // only make it harder to settle).
  return {quality("final_similarity", Direction::higher_better, MetricKind::continuous),
          quality("mean_similarity", Direction::higher_better, MetricKind::continuous),
          diagnostic("min_similarity", MetricKind::continuous, Direction::higher_better),
          diagnostic("first_below_threshold", MetricKind::count, Direction::higher_better),
          diagnostic("empty_hops", MetricKind::count, Direction::lower_better),
          diagnostic("cut_hops", MetricKind::count, Direction::lower_better)};
}

bool TelephoneProbe::deterministic() const { return m_config.temperature == 0.0; }

namespace {

/// A chain while it runs: the message passed on, the vectors each answer is scored against, and
/// what each completed hop scored.
struct Chain {
  std::vector<float> original_vector;
  std::string message;
  std::vector<float> previous_vector;
  std::vector<double> similarities;  // each completed hop's similarity to the original
  nlohmann::json hops = nlohmann::json::array();
  int empty_hops = 0;
  int cut_hops = 0;
};

/// Scores one hop's answer against the original and the previous message and records the hop; the
/// chain goes on from the answer (from the previous message when the answer is empty).
core::Expected<void> score_hop(Chain& chain, Embedder& embedder, int hop, const server::CompletionRequest& request,
                               const server::CompletionResponse& reply, const std::string& where) {
  const std::string text = strip_think_block(reply.content);
  const bool empty = text.empty();
  const bool cut = reply.stop_type == "limit";
  std::vector<float> vector;
  if (empty) {
    // Keep the previous message: the chain goes on from it and it is what gets scored.
    vector = chain.previous_vector;
    ++chain.empty_hops;
  } else {
    auto embedded = embed_one(embedder, text);
    if (!embedded) {
      core::Error error = embedded.error();
      error.message = where + error.message;
      return std::unexpected(std::move(error));
    }
    vector = std::move(*embedded);
    chain.message = text;
  }
  if (cut) ++chain.cut_hops;

  auto to_original = similarity(chain.original_vector, vector);
  auto to_previous = similarity(chain.previous_vector, vector);
  if (!to_original || !to_previous) {
    core::Error error = !to_original ? to_original.error() : to_previous.error();
    error.message = where + "cannot score: " + error.message;
    return std::unexpected(std::move(error));
  }
  chain.similarities.push_back(*to_original);

  nlohmann::json record = {
      {"hop", hop},
      {"seed", request.seed},
      {"budget", request.n_predict},
      {"text", text},
      {"sim_original", *to_original},
      {"sim_previous", *to_previous},
      {"empty", empty},
      {"cut", cut},
      {"stop_type", reply.stop_type},
  };
  if (reply.content != text) record["raw"] = reply.content;
  if (!reply.reasoning.empty()) record["reasoning"] = reply.reasoning;
  chain.hops.push_back(std::move(record));
  chain.previous_vector = std::move(vector);
  return {};
}

/// A failed hop after the first, kept in the record of the chain that stopped there.
nlohmann::json hop_failure(const core::Error& error) {
  nlohmann::json failure = {{"kind", std::string(core::to_string(error.kind))}, {"message", error.message}};
  if (error.http_status != 0) failure["http_status"] = error.http_status;
  return failure;
}

}  // namespace

core::Expected<ItemResult> TelephoneProbe::run(const Item& item, Context& ctx) {
  if (ctx.embedder == nullptr) {
    return core::fail(core::ErrorKind::invalid, "telephone probe " + name() + ": no embedder was provided");
  }
  if (!spec_ok(item.spec)) {
    return core::fail(core::ErrorKind::invalid, "telephone item " + item.key + ": spec needs a string text and a seed");
  }
  const std::string original = item.spec["text"].get<std::string>();
  const auto chain_seed = static_cast<std::uint32_t>(item.spec["seed"].get<unsigned long long>());

  auto original_vector = embed_one(*ctx.embedder, original);
  if (!original_vector) return std::unexpected(original_vector.error());

  ItemResult result;
  Chain chain;
  chain.original_vector = *original_vector;
  chain.message = original;
  chain.previous_vector = *original_vector;
  nlohmann::json failure = nullptr;
  for (int hop = 1; hop <= m_config.hops; ++hop) {
    const std::string where = "hop " + std::to_string(hop) + "/" + std::to_string(m_config.hops) + ": ";
    std::optional<std::size_t> message_tokens;
    if (m_config.budget_factor > 0) {
      if (auto n = m_counts->count(ctx.api, ctx.cell.model_path, chain.message)) message_tokens = *n;
    }
    const server::CompletionRequest request = hop_request(m_config, chain.message, message_tokens, chain_seed, hop);
    auto reply = ctx.api.complete(request);
    if (!reply) {
      core::Error error = reply.error();
      if (hop == 1 || is_server_state(error.kind)) {
        error.message = where + error.message;
        return std::unexpected(std::move(error));
      }
      failure = hop_failure(error);
      result.response["failed_at_hop"] = hop;
      break;
    }
    result.timings += reply->timings;
    if (auto scored = score_hop(chain, *ctx.embedder, hop, request, *reply, where); !scored)
      return std::unexpected(std::move(scored.error()));
  }

  result.response["original"] = original;
  result.response["seed"] = chain_seed;
  result.response["hops"] = std::move(chain.hops);
  result.response["completed_hops"] = static_cast<int>(chain.similarities.size());
  result.response["empty_hops"] = chain.empty_hops;
  result.response["cut_hops"] = chain.cut_hops;
  if (!failure.is_null()) result.response["error"] = std::move(failure);

  // At least one hop completed here: a failure on hop 1 returned above, and hops >= 1.
  result.metrics = chain_metrics(chain.similarities, m_config.threshold, chain.empty_hops, chain.cut_hops);
  return result;
}

std::unique_ptr<Probe> make_telephone_probe(const nlohmann::json& config, const ConfigSource& site) {
  return std::make_unique<TelephoneProbe>(parse_telephone_config(config, site));
}

std::optional<TelephoneHop> TelephoneHop::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto sim = j.find("sim_original");
  if (sim == j.end() || !sim->is_number()) return std::nullopt;
  TelephoneHop hop;
  hop.sim_original = sim->get<double>();
  if (const auto h = j.find("hop"); h != j.end() && h->is_number_integer() && h->get<long long>() >= 1 &&
                                    h->get<long long>() <= 1000000)
    hop.hop = static_cast<int>(h->get<long long>());
  return hop;
}

std::vector<TelephoneHop> telephone_hops(const nlohmann::json& response) {
  std::vector<TelephoneHop> out;
  if (!response.is_object()) return out;
  const auto hops = response.find("hops");
  if (hops == response.end() || !hops->is_array()) return out;
  for (std::size_t i = 0; i < hops->size(); ++i) {
    auto hop = TelephoneHop::from_json((*hops)[i]);
    if (!hop) continue;
    if (hop->hop == 0) hop->hop = static_cast<int>(i + 1);  // unnumbered: its place in the chain
    out.push_back(*hop);
  }
  return out;
}

}  // namespace kvsweep::probe
