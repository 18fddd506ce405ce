#include "kvsweep/config/command_server.hpp"

#include <algorithm>
#include <regex>

#include "kvsweep/config/server_presets.hpp"
#include "kvsweep/core/cell_key.hpp"

namespace kvsweep::config {

namespace {

// The placeholders server::expand_placeholders knows (the server layer is not config's to include).
const std::vector<std::string> kPlaceholders = {"binary", "model", "host", "port", "type_k", "type_v", "ctx"};
const std::vector<std::string> kTokenizers = {"none", "llama-server", "vllm", "tabbyapi"};
const std::vector<std::string> kPromptLogprobs = {"none", "vllm", "sglang"};
// server::Capability's names.
const std::vector<std::string> kCapabilities = {"chat",       "token_prompts", "logprobs", "logprob_ids",
                                                "tool_calls", "embeddings",    "tokenize", "llama_cpp_tools",
                                                "prompt_logprobs"};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

/// Every {name} in `text` is a known placeholder; returns the names used.
std::vector<std::string> check_placeholders(const std::string& text, const Site& site) {
  std::vector<std::string> used;
  for (std::size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    const std::string name = text.substr(open + 1, close - open - 1);
    if (std::ranges::find(kPlaceholders, name) == kPlaceholders.end())
      site.fail("unknown placeholder {" + name + "}" + did_you_mean(name, kPlaceholders) + "; known: {" +
                join(kPlaceholders) + "}");
    used.push_back(name);
  }
  return used;
}

/// cache_types: a list of names (spelled as named) or an object of name → spelling.
void read_cache_types(const nlohmann::json& v, const Site& site, CommandConfig& c) {
  c.types.clear();
  c.spelling.clear();
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) site.index(i).fail("expected a string, got " + shown(v[i]));
      c.types.push_back(v[i].get<std::string>());
      c.spelling.emplace_back(c.types.back(), c.types.back());
    }
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!it.value().is_string()) site.child(it.key()).fail("expected a string (what the server is given), got " + shown(it.value()));
      c.types.push_back(it.key());
      c.spelling.emplace_back(it.key(), it.value().get<std::string>());
    }
  } else {
    site.fail("expected a list of cache type names, or an object of name: what the server is given; got " + shown(v));
  }
  if (c.types.empty()) site.fail("must name at least one cache type");
  for (std::size_t i = 0; i < c.types.size(); ++i) {
    const std::string& t = c.types[i];
    if (t.empty() || t.find('/') != std::string::npos)
      site.fail("cache type name '" + t + "' must be non-empty and hold no '/' (a cell is written \"K/V\")");
  }
}

KvConfirmConfig read_confirm(const nlohmann::json& j, const Site& site) {
  check_keys(j, {"log", "http", "format", "pointer", "pointer_v", "metric", "label"}, site);
  KvConfirmConfig c;
  c.log = get_string(j, "log", "", site);
  c.http = get_string(j, "http", "", site);
  if (!c.log.empty() && !c.http.empty()) site.fail("give one of \"log\" and \"http\", not both");
  if (!c.log.empty() && c.log != "llama.cpp") {
    try {
      const std::regex re(c.log);
      if (re.mark_count() < 1 || re.mark_count() > 2)
        site.child("log").fail("a pattern needs one group (the type of K and V) or two (K, then V), got " +
                               std::to_string(re.mark_count()));
    } catch (const std::regex_error& e) {
      site.child("log").fail(std::string("not a regular expression: ") + e.what());
    }
  }
  if (!c.http.empty()) {
    if (c.http.front() != '/') site.child("http").fail("expected a path starting with '/', got \"" + c.http + "\"");
    c.format = get_one_of(j, "format", "json", {"json", "prometheus"}, site);
    if (c.format == "json") {
      c.pointer = get_required_string(j, "pointer", site);
      c.pointer_v = get_string(j, "pointer_v", "", site);
      for (const char* key : {"pointer", "pointer_v"}) {
        const std::string p = key == std::string("pointer") ? c.pointer : c.pointer_v;
        if (p.empty()) continue;
        try {
          (void)nlohmann::json::json_pointer(p);
        } catch (const std::exception& e) {
          site.child(key).fail(std::string("not a JSON pointer (e.g. \"/kv_cache_dtype\"): ") + e.what());
        }
      }
    } else {
      c.metric = get_required_string(j, "metric", site);
      c.label = get_required_string(j, "label", site);
    }
  }
  return c;
}

OpenAiConfig read_openai(const nlohmann::json& j, const Site& site, OpenAiConfig o) {
  check_keys(j, {"model", "tokenizer", "prompt_logprobs", "capabilities", "cache_prompt", "extra"}, site);
  o.model = get_string(j, "model", o.model, site);
  o.tokenizer = get_one_of(j, "tokenizer", o.tokenizer, kTokenizers, site);
  o.prompt_logprobs = get_one_of(j, "prompt_logprobs", o.prompt_logprobs, kPromptLogprobs, site);
  if (j.contains("capabilities")) {
    // An object of name: bool over the preset's; a list replaces them.
    const auto& cj = j["capabilities"];
    const Site cs = site.child("capabilities");
    if (cj.is_array()) {
      o.capabilities = get_strings(j, "capabilities", {}, site);
      for (std::size_t i = 0; i < o.capabilities.size(); ++i)
        if (std::ranges::find(kCapabilities, o.capabilities[i]) == kCapabilities.end())
          cs.index(i).fail("unknown capability '" + o.capabilities[i] + "'" + did_you_mean(o.capabilities[i], kCapabilities) +
                           "; known: " + join(kCapabilities));
    } else if (cj.is_object()) {
      check_keys(cj, kCapabilities, cs);
      for (const auto& name : kCapabilities) {
        if (!cj.contains(name)) continue;
        const bool on = get_bool(cj, name, false, cs);
        std::erase(o.capabilities, name);
        if (on) o.capabilities.push_back(name);
      }
    } else {
      cs.fail("expected a list of capability names or an object of name: true/false, got " + shown(cj));
    }
  }
  o.cache_prompt = get_bool(j, "cache_prompt", o.cache_prompt, site);
  if (j.contains("extra")) {
    if (!j["extra"].is_object()) site.child("extra").fail("expected an object merged into every request, got " + shown(j["extra"]));
    o.extra = j["extra"];
  }
  // The order of a list is not part of what the server can do: sorted, so the hash does not depend on it.
  std::ranges::sort(o.capabilities);
  return o;
}

}  // namespace

const std::vector<std::string>& command_server_keys() {
  static const std::vector<std::string> keys = {"preset", "command", "cache_types", "kv_tied", "reference",
                                                "ready",  "listening", "confirm",   "openai",  "name"};
  return keys;
}

const std::vector<std::string>& command_launch_keys() {
  static const std::vector<std::string> keys = {"command", "listening"};
  return keys;
}

namespace {

/// What a server serves and how it says so, launched or attached: its cache types (whether K and V
/// are one setting), its reference, its readiness, the confirmation of a cell's types, its OpenAI API.
void read_served(const nlohmann::json& sj, const Site& s, CommandConfig& c) {
  if (sj.contains("cache_types")) read_cache_types(sj["cache_types"], s.child("cache_types"), c);
  if (c.types.empty())
    s.child("cache_types").fail("missing: the cache types the server takes, e.g. [\"auto\", \"fp8\"] or "
                                "{\"f16\": \"1\", \"q8_0\": \"8\"}");
  c.tied = get_bool(sj, "kv_tied", c.tied, s);
  c.reference = get_string(sj, "reference", c.reference, s);
  if (!c.reference.empty()) {
    const auto pair = core::KvPair::parse(c.reference);
    if (!pair) s.child("reference").fail("expected \"K/V\" (e.g. \"auto/auto\"), got \"" + c.reference + "\"");
  }
  if (sj.contains("ready")) {
    const Site r = s.child("ready");
    check_keys(sj["ready"], {"path", "status"}, r);
    c.ready_path = get_string(sj["ready"], "path", c.ready_path, r);
    c.ready_status = static_cast<int>(get_int_in(sj["ready"], "status", c.ready_status, 100, 599, r));
  }
  if (c.ready_path.empty() || c.ready_path.front() != '/')
    s.child("ready").child("path").fail("expected a path starting with '/', got \"" + c.ready_path + "\"");
  if (sj.contains("confirm")) c.confirm = read_confirm(sj["confirm"], s.child("confirm"));
  c.openai = read_openai(sj.value("openai", nlohmann::json::object()), s.child("openai"), c.openai);
}

}  // namespace

CommandConfig read_command_server(const nlohmann::json& sj, const Site& s, std::string& binary, bool attached) {
  CommandConfig c;
  c.preset = get_string(sj, "preset", "", s);
  if (!c.preset.empty()) {
    const ServerPreset* preset = find_server_preset(c.preset);
    if (!preset)
      s.child("preset").fail("unknown preset '" + c.preset + "'" + did_you_mean(c.preset, server_preset_names()) +
                             "; known: " + join(server_preset_names()));
    c = preset->command;
    c.preset = preset->name;
    if (binary.empty() && !attached) binary = preset->binary;
  }
  c.server = get_string(sj, "name", c.server, s);
  if (attached) {
    // A running server: what it serves and how it says so, never how to start it.
    for (const auto& key : command_launch_keys())
      if (sj.contains(key))
        s.child(key).fail("only for a launch template (backend \"command\"); an attached server (backend "
                          "\"external\") is already running");
    c.argv.clear();
    c.listening.clear();
    read_served(sj, s, c);
    return c;
  }
  if (sj.contains("command")) c.argv = get_strings(sj, "command", {}, s);
  if (c.argv.empty())
    s.child("command").fail("missing: the server's command line as a list, e.g. [\"{binary}\", \"serve\", \"{model}\", "
                            "\"--port\", \"{port}\", …], or a \"preset\" (" + join(server_preset_names()) + ")");
  std::vector<std::string> used;
  for (std::size_t i = 0; i < c.argv.size(); ++i)
    for (auto& name : check_placeholders(c.argv[i], s.child("command").index(i))) used.push_back(std::move(name));
  const auto uses = [&](const char* name) { return std::ranges::find(used, name) != used.end(); };
  // kvsweep picks the port and binds the server to 127.0.0.1; a cell's types must reach the server.
  for (const char* required : {"port", "host"})
    if (!uses(required))
      s.child("command").fail(std::string("never uses {") + required + "}: kvsweep starts each cell's server on "
                              "127.0.0.1 at a port it picks, and the command must pass them on");
  if (sj.contains("env"))
    for (auto it = sj["env"].begin(); it != sj["env"].end(); ++it)
      if (it.value().is_string())
        for (auto& name : check_placeholders(it.value().get<std::string>(), s.child("env").child(it.key())))
          used.push_back(std::move(name));
  if (!uses("type_k") && !uses("type_v"))
    s.child("command").fail("never uses {type_k} or {type_v} (in the command or server.env): the cell's cache type "
                            "would not reach the server");
  read_served(sj, s, c);
  if (c.tied && uses("type_k") && uses("type_v"))
    s.child("kv_tied").fail("true, but the command passes {type_k} and {type_v} apart; a server with one setting "
                            "for both caches is given {type_k} only");
  c.listening = get_string(sj, "listening", c.listening, s);
  if (c.listening.empty())
    s.child("listening").fail("missing: the line the server logs once it holds its port, e.g. \"Uvicorn running on "
                              "http://{host}:{port}\" (kvsweep checks the server answering is the one it started)");
  for (auto& name : check_placeholders(c.listening, s.child("listening")))
    if (name != "host" && name != "port") s.child("listening").fail("may use {host} and {port} only, got {" + name + "}");
  return c;
}

nlohmann::json to_json(const CommandConfig& c) {
  nlohmann::json spelling = nlohmann::json::object();
  for (const auto& [name, spelled] : c.spelling) spelling[name] = spelled;
  return {{"preset", c.preset},
          {"name", c.server},
          {"command", c.argv},
          {"cache_types", spelling},
          {"kv_tied", c.tied},
          {"reference", c.reference},
          {"ready", {{"path", c.ready_path}, {"status", c.ready_status}}},
          {"listening", c.listening},
          {"confirm",
           {{"log", c.confirm.log},
            {"http", c.confirm.http},
            {"format", c.confirm.format},
            {"pointer", c.confirm.pointer},
            {"pointer_v", c.confirm.pointer_v},
            {"metric", c.confirm.metric},
            {"label", c.confirm.label}}},
          {"openai",
           {{"model", c.openai.model},
            {"tokenizer", c.openai.tokenizer},
            {"prompt_logprobs", c.openai.prompt_logprobs},
            {"capabilities", c.openai.capabilities},
            {"cache_prompt", c.openai.cache_prompt},
            {"extra", c.openai.extra}}}};
}

}  // namespace kvsweep::config
