#include "kvsweep/probe/toolcall/toolcall.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/probe/greedy.hpp"
#include "kvsweep/probe/token_list.hpp"
#include "kvsweep/score/toolcall_score.hpp"
#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::probe {

namespace {

using nlohmann::json;
using stats::SplitMix64;

std::string item_key(int length, std::uint64_t seed) {
  return "L" + std::to_string(length) + "-s" + std::to_string(seed);
}

bool exceeds_context_error(const core::Error& e) {
  return e.http_status == 400 && (e.message.find("exceed_context_size") != std::string::npos ||
                                  e.message.find("exceeds the available context") != std::string::npos);
}

class ToolcallProbe final : public Probe {
 public:
  explicit ToolcallProbe(ToolcallConfig options) : m_options(std::move(options)) {}

  std::string kind() const override { return "toolcall"; }
  std::string name() const override { return m_options.name; }
  std::vector<server::Need> needs() const override {
    if (m_options.mode == ToolcallMode::native)
      return {{server::Capability::chat, ""}, {server::Capability::tool_calls, ""}};
    return {{server::Capability::chat, ""}};
  }
  int min_context() const override {
    return *std::max_element(m_options.lengths.begin(), m_options.lengths.end()) + m_options.max_tokens + 512;
  }

  std::vector<Item> items() const override {
    std::vector<Item> out;
    for (int length : m_options.lengths)
      for (std::uint64_t seed : m_options.seeds) {
        ToolcallTask task = make_toolcall_task(seed, m_options.tools);
        out.push_back({item_key(length, seed),
                       {{"length", length},
                        {"seed", seed},
                        {"filler", std::string(corpus::to_string(m_options.filler))},
                        {"mode", mode_name()},
                        {"tool", task.expected_tool},
                        {"arguments", task.expected_arguments},
                        {"note_id", task.note_id},
                        {"depth", task.depth},
                        {"tools", task.tools.size()}}});
      }
    return out;
  }

  std::optional<Calibration> calibration() const override { return Calibration{"all_correct", 0, 1}; }

  std::vector<MetricSpec> metrics() const override {
    std::vector<MetricSpec> out;
    for (const auto& m : score::toolcall_metric_names())
      out.push_back(quality(m, Direction::higher_better, MetricKind::binary));
    if (m_options.lengths.size() > 1)
      for (int length : m_options.lengths)
        for (const auto& m : score::toolcall_metric_names())
          out.push_back(quality(length_metric(m, length), Direction::higher_better, MetricKind::binary));
    return out;
  }
  bool deterministic() const override { return true; }  // greedy

  core::Expected<ItemResult> run(const Item& item, Context& ctx) override {
    const int length = item.spec.at("length").get<int>();
    const std::uint64_t seed = item.spec.at("seed").get<std::uint64_t>();
    if (ctx.cell.n_ctx > 0 && length + m_options.max_tokens > ctx.cell.n_ctx)
      return core::exceeds_context("exceeds context: " + item.key + " needs " + std::to_string(length) + " prompt + " +
                                       std::to_string(m_options.max_tokens) + " answer tokens but the server's context is " +
                                       std::to_string(ctx.cell.n_ctx) + " (raise server.ctx or drop the length)",
                                   static_cast<long long>(length) + m_options.max_tokens);
    const ToolcallTask task = make_toolcall_task(seed, m_options.tools);
    const std::size_t fixed = toolcall_fixed_chars(task, m_options.mode);
    const double target = static_cast<double>(length) * corpus::kCharsPerToken;
    std::size_t filler_chars = target > static_cast<double>(fixed) ? static_cast<std::size_t>(target) - fixed : 0;
    ToolcallPrompt prompt = build_toolcall_prompt(task, m_options.mode, m_options.filler, filler_chars, seed);

    // Calibrate once against the server's own tokenizer, so a length means tokens. The fixed text
    // (schemas, instructions, question, the note alone) and the filler are measured apart: JSON
    // schemas and filler tokenize at different rates, and at short lengths the schemas dominate.
    json calibration = nullptr;
    const ToolcallPrompt bare = build_toolcall_prompt(task, m_options.mode, m_options.filler, 0, seed);
    const auto n_bare = count_tokens(ctx, bare);
    const auto n_full = n_bare ? count_tokens(ctx, prompt) : std::nullopt;
    if (n_bare && n_full) {
      const double filler_tokens = static_cast<double>(*n_full) - static_cast<double>(*n_bare);
      const double filler_text = static_cast<double>(prompt.filler_chars) - static_cast<double>(bare.filler_chars);
      const double per_token = filler_tokens > 0 && filler_text > 0 ? filler_text / filler_tokens : corpus::kCharsPerToken;
      calibration = {{"fixed_tokens", *n_bare}, {"first_tokens", *n_full}, {"filler_chars_per_token", per_token}};
      if (std::abs(static_cast<double>(*n_full) - length) > 0.01 * length) {
        const double room = static_cast<double>(length) - static_cast<double>(*n_bare);
        filler_chars = bare.filler_chars + (room > 0 ? static_cast<std::size_t>(room * per_token) : 0);
        prompt = build_toolcall_prompt(task, m_options.mode, m_options.filler, filler_chars, seed);
      }
    }

    server::CompletionRequest req;
    req.messages = {{"system", prompt.system}, {"user", prompt.user}};
    req.n_predict = m_options.max_tokens;
    set_greedy(req);
    req.cache_prompt = true;
    if (m_options.mode == ToolcallMode::native) {
      req.extra["tools"] = prompt.tools;
      req.extra["tool_choice"] = "auto";
    }
    if (!m_options.chat_template_kwargs.is_null()) req.extra["chat_template_kwargs"] = m_options.chat_template_kwargs;
    auto res = ctx.api.complete(req);
    if (!res) {
      if (exceeds_context_error(res.error()))
        return core::fail(core::ErrorKind::exceeds_context, "exceeds context: " + item.key + ": " + res.error().message,
                          res.error().http_status);
      return std::unexpected(res.error());
    }

    const score::ParsedCall parsed = m_options.mode == ToolcallMode::native ? score::parse_native_call(res->tool_calls)
                                                                           : score::parse_json_call(res->content);
    const score::ToolcallScore s =
        score::score_toolcall(parsed, task.tools, task.expected_tool, task.expected_arguments);

    ItemResult out;
    out.timings = res->timings;
    out.metrics = score::to_metrics(s);
    if (m_options.lengths.size() > 1)
      for (const auto& m : score::toolcall_metric_names()) out.metrics[length_metric(m, length)] = out.metrics[m];
    json call = nullptr;
    if (parsed.call) call = {{"name", parsed.call->name}, {"arguments", parsed.call->arguments}};
    out.response = {{"content", res->content},
                    {"reasoning", res->reasoning},
                    {"tool_calls", res->tool_calls},
                    {"stop_type", res->stop_type},
                    {"call", call},
                    {"parse_error", parsed.error},
                    {"problems", s.problems},
                    {"prompt_hash", toolcall_prompt_hash(prompt)},
                    {"filler_chars", prompt.filler_chars},
                    {"prompt_tokens", res->timings.prompt_n + res->timings.cache_n},
                    {"calibration", calibration}};
    return out;
  }

 private:
  std::string mode_name() const { return m_options.mode == ToolcallMode::native ? "native" : "json"; }

  static std::string length_metric(const std::string& metric, int length) {
    return metric + "_L" + std::to_string(length);
  }

  /// Tokens of the prompt's text (without the chat template's few framing tokens); nullopt when the
  /// backend cannot tokenize, in which case the character estimate stands.
  static std::optional<std::size_t> count_tokens(Context& ctx, const ToolcallPrompt& prompt) {
    std::string text = prompt.system + "\n" + prompt.user;
    if (!prompt.tools.is_null()) text += "\n" + prompt.tools.dump();
    auto tokens = ctx.api.tokenize(text, false);
    if (!tokens) return std::nullopt;
    return tokens->size();
  }

  ToolcallConfig m_options;
};

std::vector<int> get_lengths(const json& cfg, const config::Site& s) {
  return get_token_list(cfg, s, {"lengths", "context lengths", "[2048, 8192]", {2048, 8192}, 256});
}

std::vector<std::uint64_t> get_seeds(const json& cfg, const config::Site& s) {
  if (!cfg.contains("seeds")) return {1, 2, 3};
  const config::Site site = s.child("seeds");
  const json& v = cfg["seeds"];
  if (!v.is_array() || v.empty()) site.fail("expected a non-empty list of integer seeds, e.g. [1, 2, 3]");
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer() || v[i].get<long long>() < 0)
      site.index(i).fail("expected a non-negative integer seed, got " + v[i].dump());
    const auto n = v[i].get<std::uint64_t>();
    if (std::find(out.begin(), out.end(), n) != out.end()) site.index(i).fail(std::to_string(n) + " is listed twice");
    out.push_back(n);
  }
  return out;
}

}  // namespace

ToolcallConfig parse_toolcall_config(const json& cfg, const ConfigSource& site) {
  const config::Site& s = site.site;
  config::check_keys(cfg, {"kind", "name", "lengths", "seeds", "filler", "mode", "max_tokens", "tools",
                           "chat_template_kwargs"},
                     s);
  ToolcallConfig o;
  o.name = config::get_string(cfg, "name", "toolcall", s);
  o.lengths = get_lengths(cfg, s);
  o.seeds = get_seeds(cfg, s);
  o.filler = *corpus::parse_filler_kind(config::get_one_of(cfg, "filler", "code", corpus::filler_kind_names(), s));
  o.mode = config::get_one_of(cfg, "mode", "json", {"json", "native"}, s) == "native" ? ToolcallMode::native
                                                                                       : ToolcallMode::json;
  o.max_tokens = static_cast<int>(config::get_int(cfg, "max_tokens", 256, s));
  if (o.max_tokens < 1) s.child("max_tokens").fail("must be >= 1");
  const auto catalogue = static_cast<long long>(toolcall_catalogue().size());
  o.tools = static_cast<int>(config::get_int(cfg, "tools", catalogue, s));
  if (o.tools < 1 || o.tools > catalogue)
    s.child("tools").fail("expected 1 … " + std::to_string(catalogue) + " tools to offer, got " + std::to_string(o.tools));
  if (cfg.contains("chat_template_kwargs")) {
    if (!cfg["chat_template_kwargs"].is_object())
      s.child("chat_template_kwargs").fail("expected an object, e.g. {\"enable_thinking\": false}");
    o.chat_template_kwargs = cfg["chat_template_kwargs"];
  }
  // Every length must leave room for filler after the fixed text (tools, instructions, question).
  for (std::size_t i = 0; i < o.lengths.size(); ++i) {
    std::size_t fixed = 0;
    for (std::uint64_t seed : o.seeds) fixed = std::max(fixed, toolcall_fixed_chars(make_toolcall_task(seed, o.tools), o.mode));
    const auto fixed_tokens = static_cast<long long>(std::ceil(static_cast<double>(fixed) / corpus::kCharsPerToken));
    if (fixed_tokens >= o.lengths[i])
      s.child("lengths").index(i).fail(std::to_string(o.lengths[i]) + " tokens leave no room for filler: the " +
                                       std::to_string(o.tools) + " tool schemas, instructions and question take about " +
                                       std::to_string(fixed_tokens) + "; use a longer length or fewer \"tools\"");
  }
  return o;
}

std::unique_ptr<Probe> make_toolcall_probe(const json& cfg, const ConfigSource& site) {
  return std::make_unique<ToolcallProbe>(parse_toolcall_config(cfg, site));
}

}  // namespace kvsweep::probe
