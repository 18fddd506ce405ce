#include "kvsweep/server/openai/launch_template.hpp"

#include <regex>
#include <sstream>

#include "kvsweep/process/child.hpp"

namespace kvsweep::server {

namespace {

/// An HTTP confirmation endpoint is a few KiB (vLLM's /metrics is the largest, ~100 KiB).
constexpr std::size_t kConfirmLimit = std::size_t{8} << 20;

TemplateValues values_for(const TemplateOptions& o, const CellSpec& spec, int port) {
  TemplateValues v;
  v.binary = spec.binary.empty() ? o.binary : spec.binary;
  v.model = spec.model_path;
  v.port = port;
  v.type_k = spell(o, spec.type_k);
  v.type_v = spell(o, spec.type_v);
  v.ctx = spec.n_ctx;
  return v;
}

/// Both types from one value (a server with one setting for K and V), or K and V apart.
EffectiveKv found(const TemplateOptions& o, const std::string& k, const std::string& v) {
  EffectiveKv e;
  e.found = true;
  e.type_k = unspell(o, k);
  e.type_v = unspell(o, v);
  return e;
}

}  // namespace

const std::vector<std::string>& placeholder_names() {
  static const std::vector<std::string> names = {"binary", "model", "host", "port", "type_k", "type_v", "ctx"};
  return names;
}

std::string expand_placeholders(const std::string& text, const TemplateValues& v) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('{', i);
    if (open == std::string::npos) break;
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    out.append(text, i, open - i);
    const std::string name = text.substr(open + 1, close - open - 1);
    if (name == "binary") out += v.binary;
    else if (name == "model") out += v.model;
    else if (name == "host") out += v.host;
    else if (name == "port") out += v.port > 0 ? std::to_string(v.port) : "{port}";  // not chosen yet (a plan)
    else if (name == "type_k") out += v.type_k;
    else if (name == "type_v") out += v.type_v;
    else if (name == "ctx") out += std::to_string(v.ctx);
    else out.append(text, open, close - open + 1);
    i = close + 1;
  }
  out.append(text, i, std::string::npos);
  return out;
}

std::vector<std::string> template_argv(const TemplateOptions& o, const CellSpec& spec, int port) {
  const TemplateValues values = values_for(o, spec, port);
  std::vector<std::string> argv;
  for (const auto& a : o.command) argv.push_back(expand_placeholders(a, values));
  argv.insert(argv.end(), spec.extra_args.begin(), spec.extra_args.end());
  return argv;
}

std::string spell(const TemplateOptions& o, const std::string& type) {
  for (const auto& [name, spelled] : o.spelling)
    if (name == type) return spelled;
  return type;
}

std::string unspell(const TemplateOptions& o, const std::string& spelled) {
  for (const auto& [name, s] : o.spelling)
    if (s == spelled) return name;
  return spelled;
}

std::optional<std::string> prometheus_label(const std::string& text, const std::string& metric, const std::string& label) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind(metric, 0) != 0 || line.size() <= metric.size() || line[metric.size()] != '{') continue;
    // name{a="x",b="y\"z"} value: label values are quoted, with \" \\ \n escapes.
    std::size_t i = metric.size() + 1;
    while (i < line.size() && line[i] != '}') {
      const std::size_t eq = line.find('=', i);
      if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') break;
      std::string name = line.substr(i, eq - i);
      while (!name.empty() && (name.front() == ' ' || name.front() == ',')) name.erase(0, 1);
      std::string value;
      std::size_t j = eq + 2;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size()) {
          ++j;
          value += line[j] == 'n' ? '\n' : line[j];
        } else {
          value += line[j];
        }
      }
      if (name == label) return value;
      i = j + 1;
      while (i < line.size() && (line[i] == ',' || line[i] == ' ')) ++i;
    }
  }
  return std::nullopt;
}

EffectiveKv confirm_from_log(const KvConfirm& c, const TemplateOptions& o, const std::string& log) {
  if (c.source == KvConfirm::Source::llama_log) {
    EffectiveKv e = parse_effective_kv(log);
    if (e.found) {
      e.type_k = unspell(o, e.type_k);
      e.type_v = unspell(o, e.type_v);
    }
    return e;
  }
  if (c.source != KvConfirm::Source::log_regex) return {};
  std::regex re;
  try {
    re = std::regex(c.pattern);
  } catch (const std::regex_error&) {
    return {};  // the config checked it compiles: not reached
  }
  std::smatch m;
  // The last match: a server that logs its cache again (a reload) means the newest.
  std::optional<EffectiveKv> last;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it) {
    m = *it;
    if (m.size() < 2) continue;
    last = found(o, m[1].str(), m.size() > 2 && m[2].matched ? m[2].str() : m[1].str());
  }
  return last.value_or(EffectiveKv{});
}

EffectiveKv confirm_from_body(const KvConfirm& c, const TemplateOptions& o, const std::string& body, std::string& why) {
  if (c.source == KvConfirm::Source::http_prometheus) {
    const auto value = prometheus_label(body, c.metric, c.label);
    if (!value) {
      why = "GET " + c.path + " has no " + c.metric + "{" + c.label + "=…} sample";
      return {};
    }
    return found(o, *value, *value);
  }
  if (c.source != KvConfirm::Source::http_json) return {};
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(body);
  } catch (const std::exception& e) {
    why = "GET " + c.path + " is not JSON: " + e.what();
    return {};
  }
  const auto at = [&](const std::string& pointer) -> std::optional<std::string> {
    try {
      const auto& v = doc.at(nlohmann::json::json_pointer(pointer));
      if (v.is_string()) return v.get<std::string>();
      if (v.is_number_integer()) return std::to_string(v.get<long long>());
    } catch (const std::exception&) {
    }
    return std::nullopt;
  };
  const auto k = at(c.pointer);
  const auto v = c.pointer_v.empty() ? k : at(c.pointer_v);
  if (!k || !v) {
    why = "GET " + c.path + " holds no text at " + (!k ? c.pointer : c.pointer_v);
    return {};
  }
  return found(o, *k, *v);
}

process::LaunchSpec TemplateFlavour::launch_spec(const CellSpec& spec, int port) const {
  process::LaunchSpec launch;
  launch.argv = template_argv(m_options, spec, port);
  const TemplateValues values = values_for(m_options, spec, port);
  for (const auto& [name, value] : m_options.env) launch.env.emplace_back(name, expand_placeholders(value, values));
  for (const auto& [name, value] : spec.env) launch.env.emplace_back(name, expand_placeholders(value, values));
  return launch;
}

std::string TemplateFlavour::listening_line(int port) const {
  TemplateValues values;
  values.port = port;
  return expand_placeholders(m_options.listening, values);
}

std::string TemplateFlavour::log_complete_marker() const {
  // llama.cpp writes its log from a worker thread: the KV lines may follow the ready answer.
  return m_options.confirm.source == KvConfirm::Source::llama_log ? "model loaded" : "";
}

OpenAiOptions TemplateFlavour::api_options(const CellSpec& spec) const {
  OpenAiOptions api = m_options.api;
  if (api.fallback_model.empty()) api.fallback_model = spec.model_path;
  return api;
}

std::expected<void, ReadyFailure> TemplateFlavour::after_ready(ReadyContext& context) const {
  // The model every request asks for is the launched one (a server may list others), and the run
  // says which: the cell's server_ready event carries it.
  const std::shared_ptr<http::Client> client(std::shared_ptr<http::Client>(), &context.client);  // not owned
  if (context.attached) {
    // A running server: the model it serves must be the cell's (never "the only id listed").
    auto ids = OpenAiApi(client, api_options(context.spec)).models();
    const std::string differs =
        served_model_mismatch(ids.value_or(std::vector<std::string>{}), m_options.api.model, context.spec.model_path);
    if (!differs.empty())
      return std::unexpected(ReadyFailure{"while checking /v1/models", "the attached server is not this cell's: " + differs,
                                          CellOutcome::config_mismatch});
  }
  auto asked = OpenAiApi(client, api_options(context.spec)).model();
  if (!asked)
    return std::unexpected(
        ReadyFailure{"while choosing the model from /v1/models", asked.error().message, CellOutcome::load_failed});
  context.info["openai_model"] = *asked;
  const KvConfirm& c = m_options.confirm;
  context.info["kv_confirmed_by"] = [&]() -> nlohmann::json {
    switch (c.source) {
      case KvConfirm::Source::none: return "nothing (kv_unverified)";
      case KvConfirm::Source::llama_log: return "log (llama.cpp KV cache line)";
      case KvConfirm::Source::log_regex: return "log: " + c.pattern;
      case KvConfirm::Source::http_json: return "GET " + c.path + " " + c.pointer;
      case KvConfirm::Source::http_prometheus: return "GET " + c.path + " " + c.metric + "{" + c.label + "}";
    }
    return nullptr;
  }();
  if (c.source != KvConfirm::Source::http_json && c.source != KvConfirm::Source::http_prometheus) {
    if (context.attached)
      context.info["kv_unconfirmed"] = "declared by the config, unverified: an attached server's log is not read; a "
                                       "confirmation endpoint (server.confirm.http, as the vllm and sglang presets "
                                       "have) verifies them";
    return {};
  }
  auto r = context.client.get(c.path, kConfirmLimit);
  std::string why;
  if (!r) why = "GET " + c.path + ": " + r.error().message;
  else if (r->status != 200) why = "GET " + c.path + ": HTTP " + std::to_string(r->status) + ": " + http::error_message(r->body);
  EffectiveKv e = why.empty() ? confirm_from_body(c, m_options, r->body, why) : EffectiveKv{};
  // Not confirmed is not a failure to start: the cell runs and is recorded kv_unverified, never assumed.
  if (!why.empty()) context.info["kv_unconfirmed"] = why;
  context.effective = e;
  return {};
}

EffectiveKv TemplateFlavour::effective(const std::string& log, const CellSpec&) const {
  return confirm_from_log(m_options.confirm, m_options, log);
}

std::unique_ptr<Api> TemplateFlavour::make_api(std::shared_ptr<http::Client> client, const CellSpec& spec) const {
  return std::make_unique<OpenAiApi>(std::move(client), api_options(spec));
}

std::expected<std::unique_ptr<Instance>, StartFailure> TemplateBackend::start(const CellSpec& spec,
                                                                             const std::atomic<bool>& cancel) {
  if (!m_options.attach) return m_lifecycle.launch(m_flavour, spec, cancel);
  const auto& a = *m_options.attach;
  if (auto refused = m_cells.claim(a.url, spec)) return std::unexpected(std::move(*refused));
  auto key = api_key_from_env(a.api_key_env);
  if (!key) return std::unexpected(key.error());
  return m_lifecycle.attach(m_flavour, Attach{a.url, {*key, a.user, a.password}, ""}, spec, cancel);
}

nlohmann::json TemplateBackend::describe() {
  if (m_options.attach)
    return {{"backend", "external"}, {"api", "openai"}, {"server", m_options.who}, {"url", m_options.attach->url},
            {"api_key_env", m_options.attach->api_key_env}};
  return describe_binary(m_options.binary);
}

nlohmann::json TemplateBackend::describe_binary(const std::string& binary) {
  const std::string found = process::which(binary);
  return {{"backend", "command"}, {"server", m_options.who}, {"binary", found.empty() ? binary : found},
          {"command", m_options.command}, {"api", "openai"}};
}

}  // namespace kvsweep::server
