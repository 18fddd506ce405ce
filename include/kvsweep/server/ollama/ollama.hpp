#pragma once
/// The Ollama backend: one `ollama serve` per cell (KV type through OLLAMA_KV_CACHE_TYPE, one
/// setting for K and V), or attached to a running Ollama; OllamaApi speaks /api/generate,
/// /api/chat and /api/embed for it.
//
// Environment of a launched `ollama serve` (see ollama_launch_env):
//   set by kvsweep  OLLAMA_HOST=127.0.0.1:<free port>, OLLAMA_KV_CACHE_TYPE=<type>,
//                   OLLAMA_FLASH_ATTENTION=1, OLLAMA_NUM_PARALLEL=1, OLLAMA_CONTEXT_LENGTH=<n_ctx>
//   from server.env everything the user set there (OLLAMA_MODELS, OLLAMA_DEBUG, CUDA_VISIBLE_DEVICES, …)
//   defaults        OLLAMA_NO_CLOUD=1 (local models only), and, when the model is a GGUF file,
//                   OLLAMA_MODELS=<ollama_import_store()>; server.env overrides either
//   removed         every other OLLAMA_* variable inherited from kvsweep's environment
//                   (OLLAMA_MODELS, OLLAMA_KEEP_ALIVE, OLLAMA_LOAD_TIMEOUT, OLLAMA_SCHED_SPREAD,
//                   OLLAMA_GPU_OVERHEAD, OLLAMA_LLM_LIBRARY, OLLAMA_MAX_LOADED_MODELS, OLLAMA_NEW_ENGINE,
//                   OLLAMA_DEBUG, …) and every LLAMA_ARG_* variable (Ollama >= 0.30 runs llama-server as a
//                   child, which would read them); so only the config decides what a cell is.
//
// Requests: stream:false, think:false (unless the request's extra says otherwise), keep_alive, and
// options {temperature, seed, num_ctx (always the cell's n_ctx: a different num_ctx reloads the model),
// num_predict, top_k, top_p, min_p, stop}. Ollama always caches prompts; CompletionRequest::cache_prompt
// cannot be honoured and is ignored. Token-array prompts, tokenize and detokenize have no Ollama endpoint
// and fail with ErrorKind::unsupported.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/http/client.hpp"
#include "kvsweep/server/api.hpp"
#include "kvsweep/server/backend.hpp"
#include "kvsweep/server/lifecycle/lifecycle.hpp"

namespace kvsweep::server {

/// Ollama returns at most this many alternatives per token (`top_logprobs` 0–20).
inline constexpr int kOllamaMaxTopLogprobs = 20;

/// What every request to one Ollama model carries.
struct OllamaModelOptions {
  std::string model;                         // the tag, e.g. "qwen3:8b"
  int num_ctx = 4096;                        // options.num_ctx, always sent
  nlohmann::json keep_alive = -1;            // seconds (negative = forever) or a duration string
  bool think = false;                        // `think` for models with the thinking capability
  // options.use_mmap, sent when set. A launched Ollama (>= 0.30) turns mmap off on Linux CPU-only
  // hosts by passing `--no-mmap` to llama-server, a flag the llama.cpp kvsweep builds no longer
  // has (it became `--load-mode`), so the model would not load: kvsweep sends use_mmap:true,
  // which makes Ollama pass nothing. Also a load option: every request sends the same value,
  // so none reloads the model.
  std::optional<bool> use_mmap;
};

/// A GGUF file given as an Ollama model: imported once into kvsweep's own model store under a
/// tag named by its content, `kvsweep/<file stem>:<first 12 hex of its sha256>`, so a changed
/// file is a new tag and never a stale import.
struct OllamaImport {
  std::string tag;
  std::string sha256;  // hex, of the whole file
  std::filesystem::path file;
};
/// The import for `model_path` when it names a regular file ending in .gguf, else nullopt (a tag).
/// The file's hash is computed once per file (size and mtime unchanged) per process.
std::optional<core::Expected<OllamaImport>> ollama_import_for(const std::string& model_path);
/// kvsweep's Ollama model store for imported GGUFs: $XDG_CACHE_HOME/kvsweep/ollama-models
/// (~/.cache/kvsweep/ollama-models), shared by runs; content-addressed like any Ollama store.
std::filesystem::path ollama_import_store();
/// The model store a launched Ollama of `spec` reads: its server.env's OLLAMA_MODELS, else
/// ollama_import_store().
std::filesystem::path ollama_store_for(const CellSpec& spec);
/// Imports `import` into the Ollama at `client` (POST /api/blobs/sha256:…, then /api/create with
/// the blob as the model file) unless the tag is there already and `store`'s layer blob for it
/// (blobs/sha256-<hex>) hashes to the GGUF's sha256; a blob of other content is removed and imported
/// again. Returns whether it imported.
core::Expected<bool> ollama_ensure_import(http::Client& client, const OllamaImport& import,
                                          const std::filesystem::path& store);

/// The types Ollama `version` passes on. Before 0.30 its in-process runner accepted f16, q8_0
/// and q4_0 only (anything else ran as f16, with a warning in the log); since 0.30 the type goes
/// unvalidated to llama-server as --cache-type-k and --cache-type-v (empty: every llama.cpp type).
/// An unreadable version ("", "0.0.0": a build without its version stamped) is treated as >= 0.30.
std::vector<std::string> ollama_accepted_kv_types(const std::string& version);
/// True when `version` is older than 0.30 (so the in-process runner, not llama-server).
bool ollama_before_llama_server(const std::string& version);

/// One HTTP request to make: the endpoint and its JSON body.
struct OllamaRequest {
  std::string path;                          // /api/generate or /api/chat
  nlohmann::json body;
};

/// The request for `request`: /api/chat when it has messages, else /api/generate with raw:true.
/// A token-array prompt or more than 20 log-probabilities per token is ErrorKind::unsupported.
core::Expected<OllamaRequest> ollama_completion_request(const CompletionRequest& request, const OllamaModelOptions& model);
/// Parses a non-streamed /api/generate (chat = false) or /api/chat answer; durations ns → ms.
core::Expected<CompletionResponse> parse_ollama_completion(const nlohmann::json& body, bool chat);
/// The /api/embed body for `inputs`.
nlohmann::json ollama_embed_body(const std::vector<std::string>& inputs, const OllamaModelOptions& model);
/// Parses an /api/embed answer, which must hold one embedding per input.
core::Expected<std::vector<std::vector<float>>> parse_ollama_embed(const nlohmann::json& body, std::size_t n_inputs);

/// server::Api spoken to Ollama's native endpoints for one model tag.
class OllamaApi final : public Api {
 public:
  OllamaApi(std::shared_ptr<http::Client> client, OllamaModelOptions model)
      : m_client(std::move(client)), m_model(std::move(model)) {}

  core::Expected<CompletionResponse> complete(const CompletionRequest& request) override;
  core::Expected<std::vector<std::int32_t>> tokenize(const std::string& text, bool add_special) override;
  core::Expected<std::string> detokenize(const std::vector<std::int32_t>& tokens) override;
  core::Expected<std::vector<std::vector<float>>> embed(const std::vector<std::string>& inputs) override;
  std::string describe() const override { return "Ollama (" + m_model.model + ") at " + m_client->base_url(); }

 private:
  std::shared_ptr<http::Client> m_client;
  OllamaModelOptions m_model;
};

struct OllamaOptions {
  std::string binary = "ollama";  // launch mode: the `ollama` executable
  std::string url;                // attach mode when non-empty: a running Ollama's base URL
  std::string api_key_env;        // attach mode: env var holding a bearer token ("" = none)
  std::string user;               // attach mode: basic auth from the URL's userinfo (the url holds none)
  std::string password;
};

/// Ollama's part of the lifecycle: `ollama serve` with the cell's environment, ready on GET
/// /api/version, then the tag checked with POST /api/show (a missing tag is load_failed) and the
/// model warmed before any timed request.
class OllamaFlavour final : public Flavour {
 public:
  OllamaFlavour(std::string binary, bool attached) : m_binary(std::move(binary)), m_attached(attached) {}
  /// A flavour that only looks: after ready it asks /api/show for each of `tags` and writes
  /// info["models"] = {tag: true|false} (OllamaBackend::check_models), with no model loaded.
  OllamaFlavour(std::string binary, std::vector<std::string> tags)
      : m_binary(std::move(binary)), m_attached(false), m_check_only(std::move(tags)), m_checking(true) {}
  std::string who() const override { return m_attached ? "Ollama" : "ollama serve"; }
  std::optional<process::LlamaProgram> llama_program() const override { return process::LlamaProgram::ollama; }
  process::LaunchSpec launch_spec(const CellSpec& spec, int port) const override;
  std::string launch_line(const process::LaunchSpec& launch) const override;
  void describe_launch(const process::LaunchSpec& launch, nlohmann::json& info) const override;
  std::string ready_path() const override { return "/api/version"; }
  /// `msg="Listening on 127.0.0.1:<port> (version …)"`.
  std::string listening_line(int port) const override { return "Listening on 127.0.0.1:" + std::to_string(port); }
  std::expected<void, ReadyFailure> after_ready(ReadyContext& context) const override;
  EffectiveKv effective(const std::string& log, const CellSpec& spec) const override;
  std::unique_ptr<Api> make_api(std::shared_ptr<http::Client> client, const CellSpec& spec) const override;
  static OllamaModelOptions model_options(const CellSpec& spec, bool attached);

 private:
  std::expected<void, ReadyFailure> check_tags(ReadyContext& context) const;

  std::string m_binary;
  bool m_attached;
  std::vector<std::string> m_check_only;
  bool m_checking = false;
};

/// What a dry run learns from the installed Ollama before any cell: its version and, per tag,
/// whether its store holds it.
struct OllamaInventory {
  std::string version;
  std::vector<std::pair<std::string, bool>> tags;  // tag, present
};

/// Launches `ollama serve` per cell (url empty) or attaches to a running Ollama (url set; the
/// KV type is then the user's declaration).
class OllamaBackend final : public Backend {
 public:
  explicit OllamaBackend(OllamaOptions options, process::Launcher& launcher = process::child_launcher(),
                         ReadyProbe& probe = http_ready_probe())
      : m_options(options), m_flavour(options.binary, !options.url.empty()), m_lifecycle(launcher, probe) {}
  std::string kind() const override { return m_options.url.empty() ? "ollama" : "external"; }
  std::expected<std::unique_ptr<Instance>, StartFailure> start(const CellSpec& spec,
                                                             const std::atomic<bool>& cancel) override;
  nlohmann::json describe() override;
  /// Starts `ollama serve` once with `base`'s environment (its model store) and asks for each
  /// tag; launch mode only.
  std::expected<OllamaInventory, StartFailure> check_models(const CellSpec& base, const std::vector<std::string>& tags,
                                                             const std::atomic<bool>& cancel);

 private:
  OllamaOptions m_options;
  OllamaFlavour m_flavour;
  Lifecycle m_lifecycle;
  nlohmann::json m_description;
};

/// The environment for one cell's `ollama serve`.
struct OllamaEnv {
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> unset;
};
/// `inherited` holds the names in kvsweep's own environment; see the comment at the top.
OllamaEnv ollama_launch_env(const CellSpec& spec, int port, const std::vector<std::string>& inherited);

/// The KV types a launched Ollama used, from its log: llama.cpp's `llama_kv_cache: … K (T) … V (T)`
/// line (Ollama >= 0.30); f16 when an older Ollama logged that it ignored the requested type;
/// otherwise the requested types with `declared` set (nothing in the log to check them against).
EffectiveKv ollama_effective_kv(const std::string& log, const CellSpec& spec);

}  // namespace kvsweep::server
