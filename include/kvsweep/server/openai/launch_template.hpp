#pragma once
/// The launch-template backend: any server started from an argv with placeholders ({binary} {model}
/// {host} {port} {type_k} {type_v} {ctx}), each cache type spelled the server's way, ready when a path
/// answers a status, its effective KV type confirmed from its log or an HTTP endpoint (JSON or
/// Prometheus text), and driven over the OpenAI API. One child per cell through the lifecycle (bound to
/// 127.0.0.1, stopped with kvsweep), as for llama-server.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvsweep/server/lifecycle/attach_verify.hpp"
#include "kvsweep/server/backend.hpp"
#include "kvsweep/server/lifecycle/lifecycle.hpp"
#include "kvsweep/server/openai/openai_api.hpp"

namespace kvsweep::server {

/// How the type a server allocated is read back. Nothing read back leaves the cell kv_unverified.
struct KvConfirm {
  enum class Source {
    none,        // nothing to read: every cell is kv_unverified
    llama_log,   // llama.cpp's own log lines (parse_effective_kv): types, MiB, flash attention
    log_regex,   // `pattern` over the log: group 1 is K, group 2 V (one group: both)
    http_json,   // GET `path`, a JSON document: `pointer` (K, or both) and `pointer_v` (V)
    http_prometheus,  // GET `path`, Prometheus text: the label `label` of the metric `metric`
  };
  Source source = Source::none;
  std::string pattern;
  std::string path;
  std::string pointer;
  std::string pointer_v;
  std::string metric;
  std::string label;
};

struct TemplateOptions {
  std::string who = "server";                 // the server in messages ("vLLM")
  std::vector<std::string> command;           // argv with placeholders; {binary} is `binary`
  std::string binary;                         // resolved (a variant's binary replaces it)
  std::vector<std::pair<std::string, std::string>> env;    // values may hold placeholders
  std::vector<std::pair<std::string, std::string>> spelling;  // cache type → what the server is given
  std::string ready_path = "/health";
  int ready_status = 200;
  std::string listening;                      // the log line that says it holds the port ({host} {port})
  KvConfirm confirm;
  OpenAiOptions api;
  /// backend "external" with api "openai": the running server to attach to instead of launching one
  /// (its model checked against /v1/models, its types confirmed over HTTP or declared, unverified).
  struct Attached {
    std::string url;          // without userinfo
    std::string api_key_env;  // the variable holding its key ("" = none)
    std::string user, password;
  };
  std::optional<Attached> attach;
};

/// What a cell's placeholders stand for.
struct TemplateValues {
  std::string binary;
  std::string model;
  std::string host = "127.0.0.1";
  int port = 0;        // 0: not chosen yet, {port} stays (a plan)
  std::string type_k;  // spelled
  std::string type_v;
  int ctx = 0;
};

/// `text` with every {name} replaced; an unknown {name} is left as it is (the config refuses it).
std::string expand_placeholders(const std::string& text, const TemplateValues& values);
/// The placeholders expand_placeholders knows.
const std::vector<std::string>& placeholder_names();
/// The argv a cell is launched with (exposed for tests and --dry-run).
std::vector<std::string> template_argv(const TemplateOptions& options, const CellSpec& spec, int port);

/// A cache type as the server spells it (identity when `spelling` does not name it), and back.
std::string spell(const TemplateOptions& options, const std::string& type);
std::string unspell(const TemplateOptions& options, const std::string& spelled);

/// The value of label `label` on the first sample of `metric` in Prometheus text exposition
/// (`name{a="x",b="y"} 1`); nullopt when there is no such sample or label.
std::optional<std::string> prometheus_label(const std::string& text, const std::string& metric, const std::string& label);

/// The effective types `confirm` reads from a log (llama_log, log_regex), unspelled; found = false when
/// the log does not say.
EffectiveKv confirm_from_log(const KvConfirm& confirm, const TemplateOptions& options, const std::string& log);
/// The same from an HTTP endpoint's body (http_json, http_prometheus); `why` says what was missing.
EffectiveKv confirm_from_body(const KvConfirm& confirm, const TemplateOptions& options, const std::string& body,
                              std::string& why);

class TemplateFlavour final : public Flavour {
 public:
  explicit TemplateFlavour(TemplateOptions options) : m_options(std::move(options)) {}
  std::string who() const override { return m_options.who; }
  process::LaunchSpec launch_spec(const CellSpec& spec, int port) const override;
  std::string ready_path() const override { return m_options.ready_path; }
  int ready_status() const override { return m_options.ready_status; }
  std::string listening_line(int port) const override;
  std::string log_complete_marker() const override;
  /// The model the requests ask for (OpenAiApi::model, recorded as info "openai_model"; several
  /// models listed and none of them the launched one fails the start), then the HTTP confirmation
  /// (http_json, http_prometheus), read once the server is ready.
  std::expected<void, ReadyFailure> after_ready(ReadyContext& context) const override;
  EffectiveKv effective(const std::string& log, const CellSpec& spec) const override;
  std::unique_ptr<Api> make_api(std::shared_ptr<http::Client> client, const CellSpec& spec) const override;

 private:
  /// The API's options for `spec`: the launched model ({model}) when the config names none.
  OpenAiOptions api_options(const CellSpec& spec) const;
  TemplateOptions m_options;
};

class TemplateBackend final : public Backend {
 public:
  explicit TemplateBackend(TemplateOptions options, process::Launcher& launcher = process::child_launcher(),
                           ReadyProbe& probe = http_ready_probe())
      : m_options(options), m_flavour(std::move(options)), m_lifecycle(launcher, probe) {}
  std::string kind() const override { return "command"; }
  std::expected<std::unique_ptr<Instance>, StartFailure> start(const CellSpec& spec,
                                                             const std::atomic<bool>& cancel) override;
  nlohmann::json describe() override;
  nlohmann::json describe_binary(const std::string& binary) override;

 private:
  TemplateOptions m_options;
  TemplateFlavour m_flavour;
  Lifecycle m_lifecycle;
  OneServerOneCell m_cells;  // attached: one cell per server
};

}  // namespace kvsweep::server
