#include "kvsweep/probe/telephone.hpp"

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
#include <set>
#include <sstream>
#include <utility>

#include "kvsweep/score/cosine.hpp"

namespace kvsweep::probe {

namespace {

// ---------------------------------------------------------------------------------------
// Presets
// ---------------------------------------------------------------------------------------

struct Preset {
  std::string_view name;
  std::string_view text;
};

constexpr std::array<Preset, 3> presets{{
    // The published harness behind seed 000 (Python, Ollama), as quoted in issue 4. The
    // seed's blog post words its methodology line as "Paraphrase this message for the next
    // agent: [previous]"; the issue's wording is the one the harness is said to use.
    {"published", telephone_default_template},
    // Perez et al. (2025), "When LLMs Play the Telephone Game: Cultural Attractors as
    // Conceptual Tools to Evaluate LLMs in Multi-turn Settings", ICLR 2025, arXiv:2407.04503,
    // task "rephrase" (code: github.com/jeremyperez2/TelephoneGameLLM).
    // APPROXIMATED: the exact prompt text could not be checked here; this keeps the task's
    // intent (reword, same meaning, output only the new text). Use "template" to pin the
    // paper's exact wording.
    {"perez2025",
     "Rephrase the following text. Keep its meaning, and output only the rephrased text.\n\n{message}"},
    // Mohamed et al. (2025), "LLM as a Broken Telephone: Iterative Generation Distorts
    // Information", ACL 2025, arXiv:2502.20258 — the rephrasing ablation's prompt
    // (`prompt3` in Scripts/Ablations/Rephrase/*/Rephrase/config.py of
    // github.com/amr-mohamedd/LLM-as-a-Broken-Telephone), with Python's `{}` written as
    // `{message}` and the surrounding newlines of the triple-quoted string dropped.
    {"mohamed2025",
     "Given a passage, rephrase it while preserving all the original meaning and without losing any context. \n"
     "Do not write an introduction or a summary. Return only the rephrased passage.\n\n"
     "Rephrase the following text: {message}"},
}};

// ---------------------------------------------------------------------------------------
// Config errors
// ---------------------------------------------------------------------------------------

constexpr std::array<std::string_view, 19> known_keys{
    "kind",       "name", "texts",  "texts_file",        "template",  "preset", "hops",  "temperature", "seeds",
    "max_tokens", "budget_factor", "budget_plus", "mode", "system", "suppress_thinking", "threshold", "top_k",  "top_p", "min_p"};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// "(did you mean "x"?)" when one candidate is close (few edits, or one is a prefix of the
/// other); otherwise the list of candidates.
template <class Range>
std::string suggestion(std::string_view given, const Range& candidates) {
  std::string_view best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view candidate : candidates) {
    const std::size_t d = edit_distance(given, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  const bool prefix = !given.empty() && (best.starts_with(given) || given.starts_with(best));
  if (!best.empty() && (best_distance <= std::max<std::size_t>(2, given.size() / 3) || prefix)) {
    return "(did you mean \"" + std::string(best) + "\"?)";
  }
  if (!given.empty()) {
    for (std::string_view candidate : candidates) {
      if (candidate.starts_with(given)) return "(did you mean \"" + std::string(candidate) + "\"?)";
    }
  }
  std::string list;
  for (std::string_view candidate : candidates) {
    if (!list.empty()) list += ", ";
    list += candidate;
  }
  return "(one of: " + list + ")";
}

class Reader {
 public:
  Reader(const nlohmann::json& config, const ConfigSite& site) : m_config(config), m_site(site) {}

  [[noreturn]] void fail(std::string_view key, const std::string& what) const {
    std::string where = m_site.file.empty() ? std::string("<config>") : m_site.file;
    std::string path = m_site.path;
    if (!key.empty()) path += path.empty() ? std::string(key) : "." + std::string(key);
    throw core::FatalError(where + ": " + (path.empty() ? "" : path + ": ") + what);
  }

  static std::string shown(const nlohmann::json& value) {
    std::string text = value.dump();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return std::string(value.type_name()) + " " + text;
  }

  bool has(std::string_view key) const { return m_config.contains(std::string(key)); }
  const nlohmann::json& at(std::string_view key) const { return m_config.at(std::string(key)); }

  std::string string(std::string_view key) const {
    const auto& v = at(key);
    if (!v.is_string()) fail(key, "expected a string, got " + shown(v));
    return v.get<std::string>();
  }
  bool boolean(std::string_view key) const {
    const auto& v = at(key);
    if (!v.is_boolean()) fail(key, "expected true or false, got " + shown(v));
    return v.get<bool>();
  }
  long long integer(std::string_view key, long long lo, long long hi) const {
    const auto& v = at(key);
    if (!v.is_number_integer()) fail(key, "expected an integer, got " + shown(v));
    // Unsigned values above LLONG_MAX are out of range either way.
    if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi)) {
      fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + v.dump());
    }
    const long long n = v.get<long long>();
    if (n < lo || n > hi) {
      fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + v.dump());
    }
    return n;
  }
  double number(std::string_view key, double lo, double hi, bool lo_open = false) const {
    const auto& v = at(key);
    if (!v.is_number()) fail(key, "expected a number, got " + shown(v));
    const double x = v.get<double>();
    if (!(lo_open ? x > lo : x >= lo) || !(x <= hi)) {
      std::ostringstream range;
      range << (lo_open ? "greater than " : "at least ") << lo << " and at most " << hi;
      fail(key, "must be " + range.str() + ", got " + v.dump());
    }
    return x;
  }

 private:
  const nlohmann::json& m_config;
  const ConfigSite& m_site;
};

std::vector<std::string> read_texts_file(const Reader& reader, const std::string& name, const ConfigSite& site) {
  std::filesystem::path path(name);
  if (path.is_relative()) path = site.base_dir / path;
  std::ifstream in(path, std::ios::binary);
  if (!in) reader.fail("texts_file", "cannot read " + path.string() + " (the path is relative to the config file)");
  const bool jsonl = path.extension() == ".jsonl";
  std::vector<std::string> texts;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!jsonl) {
      texts.push_back(line);
      continue;
    }
    const std::string where = path.string() + ":" + std::to_string(line_no) + ": ";
    const auto object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded()) reader.fail("texts_file", where + "not valid JSON");
    if (!object.is_object() || !object.contains("text") || !object["text"].is_string()) {
      reader.fail("texts_file", where + "expected an object with a string \"text\"");
    }
    if (object["text"].get<std::string>().empty()) reader.fail("texts_file", where + "\"text\" is empty");
    texts.push_back(object["text"].get<std::string>());
  }
  if (texts.empty()) reader.fail("texts_file", path.string() + " holds no texts");
  return texts;
}

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

void add(server::Timings& sum, const server::Timings& t) {
  sum.prompt_n += t.prompt_n;
  sum.cache_n += t.cache_n;
  sum.prompt_ms += t.prompt_ms;
  sum.predicted_n += t.predicted_n;
  sum.predicted_ms += t.predicted_ms;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view space = " \t\r\n\f\v";
  const auto first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(space);
  return s.substr(first, last - first + 1);
}

}  // namespace

// -----------------------------------------------------------------------------------------
// Public helpers
// -----------------------------------------------------------------------------------------

std::optional<std::string> telephone_preset(std::string_view name) {
  for (const auto& preset : presets) {
    if (preset.name == name) return std::string(preset.text);
  }
  return std::nullopt;
}

std::vector<std::string> telephone_preset_names() {
  std::vector<std::string> names;
  for (const auto& preset : presets) names.emplace_back(preset.name);
  return names;
}

std::string render_template(std::string_view tmpl, std::string_view message) {
  constexpr std::string_view placeholder = "{message}";
  std::string out;
  out.reserve(tmpl.size() + message.size());
  std::size_t pos = 0;
  while (true) {
    const std::size_t found = tmpl.find(placeholder, pos);
    if (found == std::string_view::npos) break;
    out.append(tmpl.substr(pos, found - pos));
    out.append(message);
    pos = found + placeholder.size();
  }
  out.append(tmpl.substr(pos));
  return out;
}

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

TelephoneConfig parse_telephone_config(const nlohmann::json& config, const ConfigSite& site) {
  Reader reader(config, site);
  if (!config.is_object()) reader.fail("", "expected a probe object, got " + Reader::shown(config));

  for (const auto& [key, value] : config.items()) {
    if (std::find(known_keys.begin(), known_keys.end(), key) == known_keys.end()) {
      reader.fail(key, "unknown key for a telephone probe " + suggestion(key, known_keys));
    }
  }

  TelephoneConfig out;
  if (!reader.has("kind")) reader.fail("kind", "missing (expected \"telephone\")");
  if (reader.string("kind") != "telephone") {
    reader.fail("kind", "expected \"telephone\", got \"" + reader.string("kind") + "\"");
  }
  if (reader.has("name")) {
    out.name = reader.string("name");
    if (out.name.empty()) reader.fail("name", "must not be empty");
  }

  if (reader.has("texts") && reader.has("texts_file")) {
    reader.fail("texts_file", "give either \"texts\" or \"texts_file\", not both");
  }
  if (reader.has("texts")) {
    const auto& texts = reader.at("texts");
    if (!texts.is_array()) reader.fail("texts", "expected an array of strings, got " + Reader::shown(texts));
    if (texts.empty()) reader.fail("texts", "must hold at least one text");
    out.texts.clear();
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const std::string key = "texts[" + std::to_string(i) + "]";
      if (!texts[i].is_string()) reader.fail(key, "expected a string, got " + Reader::shown(texts[i]));
      if (texts[i].get<std::string>().empty()) reader.fail(key, "must not be empty");
      out.texts.push_back(texts[i].get<std::string>());
    }
  } else if (reader.has("texts_file")) {
    const std::string file = reader.string("texts_file");
    if (file.empty()) reader.fail("texts_file", "must not be empty");
    out.texts = read_texts_file(reader, file, site);
  }

  if (reader.has("template") && reader.has("preset")) {
    reader.fail("preset", "give either \"template\" or \"preset\", not both");
  }
  if (reader.has("template")) {
    out.template_text = reader.string("template");
    if (out.template_text.find("{message}") == std::string::npos) {
      reader.fail("template", "must contain {message}, where the current message goes");
    }
  } else if (reader.has("preset")) {
    out.preset = reader.string("preset");
    auto text = telephone_preset(out.preset);
    if (!text) {
      reader.fail("preset", "unknown preset \"" + out.preset + "\" " + suggestion(out.preset, telephone_preset_names()));
    }
    out.template_text = *text;
  }

  if (reader.has("hops")) out.hops = static_cast<int>(reader.integer("hops", 1, 100000));
  if (reader.has("temperature")) out.temperature = reader.number("temperature", 0.0, 100.0);
  if (reader.has("seeds")) {
    const auto& seeds = reader.at("seeds");
    if (!seeds.is_array()) reader.fail("seeds", "expected an array of integers, got " + Reader::shown(seeds));
    if (seeds.empty()) reader.fail("seeds", "must hold at least one seed");
    out.seeds.clear();
    std::set<std::uint32_t> seen;
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      const std::string key = "seeds[" + std::to_string(i) + "]";
      const auto& s = seeds[i];
      // 0xFFFFFFFF is llama-server's "random seed".
      const bool in_range = s.is_number_integer() && (s.is_number_unsigned() || s.get<long long>() >= 0) &&
                            s.get<unsigned long long>() <= 0xFFFFFFFEull;
      if (!in_range) {
        reader.fail(key, "expected an integer from 0 to 4294967294, got " + Reader::shown(s));
      }
      const auto seed = static_cast<std::uint32_t>(s.get<unsigned long long>());
      if (!seen.insert(seed).second) reader.fail(key, "seed " + std::to_string(seed) + " is listed twice");
      out.seeds.push_back(seed);
    }
  }
  if (reader.has("max_tokens")) out.max_tokens = static_cast<int>(reader.integer("max_tokens", 1, 1 << 24));
  if (reader.has("budget_plus")) out.budget_plus = static_cast<int>(reader.integer("budget_plus", 0, 1 << 24));
  if (reader.has("budget_factor")) {
    const auto& v = config.at("budget_factor");
    if (!v.is_number() || v.get<double>() < 0) reader.fail("budget_factor", "expected a number >= 0, got " + v.dump());
    out.budget_factor = v.get<double>();
  }
  if (reader.has("mode")) {
    const std::string mode = reader.string("mode");
    if (mode == "chat") {
      out.mode = TelephoneMode::chat;
    } else if (mode == "raw") {
      out.mode = TelephoneMode::raw;
    } else {
      reader.fail("mode", "unknown mode \"" + mode + "\" " +
                              suggestion(mode, std::array<std::string_view, 2>{"chat", "raw"}));
    }
  }
  if (reader.has("system")) {
    if (out.mode == TelephoneMode::raw) reader.fail("system", "applies to \"mode\": \"chat\" only");
    out.system = reader.string("system");
  }
  if (reader.has("suppress_thinking")) out.suppress_thinking = reader.boolean("suppress_thinking");
  if (reader.has("threshold")) out.threshold = reader.number("threshold", -1.0, 1.0);
  if (reader.has("top_k")) out.top_k = static_cast<int>(reader.integer("top_k", 0, 1 << 24));
  if (reader.has("top_p")) out.top_p = reader.number("top_p", 0.0, 1.0, /*lo_open=*/true);
  if (reader.has("min_p")) out.min_p = reader.number("min_p", 0.0, 1.0);
  return out;
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
  return {quality("final_similarity", Direction::higher_better, MetricKind::continuous),
          quality("mean_similarity", Direction::higher_better, MetricKind::continuous),
          quality("min_similarity", Direction::higher_better, MetricKind::continuous),
          quality("first_below_threshold", Direction::higher_better, MetricKind::count),
          diagnostic("empty_hops", MetricKind::count, Direction::lower_better),
          diagnostic("cut_hops", MetricKind::count, Direction::lower_better)};
}

bool TelephoneProbe::deterministic() const { return m_config.temperature == 0.0; }

core::Expected<ItemResult> TelephoneProbe::run(const Item& item, Context& ctx) {
  if (ctx.embedder == nullptr) {
    return core::fail(core::ErrorKind::invalid, "telephone probe " + name() + ": no embedder was provided");
  }
  const auto& spec = item.spec;
  const bool spec_ok = spec.is_object() && spec.contains("text") && spec["text"].is_string() &&
                       spec.contains("seed") && spec["seed"].is_number_integer() &&
                       (spec["seed"].is_number_unsigned() || spec["seed"].get<long long>() >= 0) &&
                       spec["seed"].get<unsigned long long>() <= 0xFFFFFFFFull;
  if (!spec_ok) {
    return core::fail(core::ErrorKind::invalid, "telephone item " + item.key + ": spec needs a string text and a seed");
  }
  const std::string original = spec["text"].get<std::string>();
  const auto chain_seed = static_cast<std::uint32_t>(spec["seed"].get<unsigned long long>());

  auto original_vector = embed_one(*ctx.embedder, original);
  if (!original_vector) return std::unexpected(original_vector.error());

  ItemResult result;
  nlohmann::json hops = nlohmann::json::array();
  std::string message = original;
  std::vector<float> previous_vector = *original_vector;
  std::vector<double> similarities;
  int empty_hops = 0;
  int cut_hops = 0;
  nlohmann::json failure = nullptr;

  for (int hop = 1; hop <= m_config.hops; ++hop) {
    const std::string where = "hop " + std::to_string(hop) + "/" + std::to_string(m_config.hops) + ": ";
    server::CompletionRequest request;
    const std::string rendered = render_template(m_config.template_text, message);
    if (m_config.mode == TelephoneMode::chat) {
      if (m_config.system) request.messages.push_back({"system", *m_config.system});
      request.messages.push_back({"user", rendered});
      if (m_config.suppress_thinking) {
        request.extra["chat_template_kwargs"] = {{"enable_thinking", false}};
      }
    } else {
      request.prompt = rendered;
    }
    request.n_predict = m_config.max_tokens;
    if (m_config.budget_factor > 0) {
      // Relative budget: the input's own length in tokens bounds the answer.
      if (auto n = m_counts->count(ctx.api, ctx.cell.model_path, message)) {
        const double budget = m_config.budget_factor * static_cast<double>(*n) + m_config.budget_plus;
        request.n_predict = std::min(m_config.max_tokens, std::max(1, static_cast<int>(budget)));
      }
    }
    request.temperature = m_config.temperature;
    request.seed = telephone_hop_seed(chain_seed, hop);
    request.top_k = m_config.top_k;
    request.top_p = m_config.top_p;
    request.min_p = m_config.min_p;
    request.n_probs = 0;
    request.cache_prompt = true;

    auto reply = ctx.api.complete(request);
    if (!reply) {
      core::Error error = reply.error();
      if (hop == 1 || is_server_state(error.kind)) {
        error.message = where + error.message;
        return std::unexpected(std::move(error));
      }
      failure = {{"kind", std::string(core::to_string(error.kind))}, {"message", error.message}};
      if (error.http_status != 0) failure["http_status"] = error.http_status;
      result.response["failed_at_hop"] = hop;
      break;
    }
    add(result.timings, reply->timings);

    const std::string text = strip_think_block(reply->content);
    const bool empty = text.empty();
    const bool cut = reply->stop_type == "limit";
    std::vector<float> vector;
    if (empty) {
      // Keep the previous message: the chain goes on from it and it is what gets scored.
      vector = previous_vector;
      ++empty_hops;
    } else {
      auto embedded = embed_one(*ctx.embedder, text);
      if (!embedded) {
        core::Error error = embedded.error();
        error.message = where + error.message;
        return std::unexpected(std::move(error));
      }
      vector = std::move(*embedded);
      message = text;
    }
    if (cut) ++cut_hops;

    auto to_original = similarity(*original_vector, vector);
    auto to_previous = similarity(previous_vector, vector);
    if (!to_original || !to_previous) {
      core::Error error = !to_original ? to_original.error() : to_previous.error();
      error.message = where + "cannot score: " + error.message;
      return std::unexpected(std::move(error));
    }
    similarities.push_back(*to_original);

    nlohmann::json record = {
        {"hop", hop},
        {"seed", request.seed},
        {"budget", request.n_predict},
        {"text", text},
        {"sim_original", *to_original},
        {"sim_previous", *to_previous},
        {"empty", empty},
        {"cut", cut},
        {"stop_type", reply->stop_type},
    };
    if (reply->content != text) record["raw"] = reply->content;
    if (!reply->reasoning.empty()) record["reasoning"] = reply->reasoning;
    hops.push_back(std::move(record));
    previous_vector = std::move(vector);
  }

  const int completed = static_cast<int>(similarities.size());
  result.response["original"] = original;
  result.response["seed"] = chain_seed;
  result.response["hops"] = std::move(hops);
  result.response["completed_hops"] = completed;
  result.response["empty_hops"] = empty_hops;
  result.response["cut_hops"] = cut_hops;
  if (!failure.is_null()) result.response["error"] = std::move(failure);

  // completed >= 1 here: a failure on hop 1 returned above, and hops >= 1.
  int first_below = completed + 1;
  for (int i = 0; i < completed; ++i) {
    if (similarities[static_cast<std::size_t>(i)] < m_config.threshold) {
      first_below = i + 1;
      break;
    }
  }
  result.metrics = {
      {"final_similarity", similarities.back()},
      {"mean_similarity", std::accumulate(similarities.begin(), similarities.end(), 0.0) / completed},
      {"min_similarity", *std::min_element(similarities.begin(), similarities.end())},
      {"first_below_threshold", first_below},
      {"empty_hops", empty_hops},
      {"cut_hops", cut_hops},
  };
  return result;
}

std::unique_ptr<Probe> make_telephone_probe(const nlohmann::json& config, const ConfigSite& site) {
  return std::make_unique<TelephoneProbe>(parse_telephone_config(config, site));
}

}  // namespace kvsweep::probe
