#include "kvsweep/config/server_presets.hpp"

namespace kvsweep::config {

namespace {

/// Uvicorn (vLLM, SGLang, TabbyAPI and llama-cpp-python all serve through it) logs this once it holds the port.
constexpr const char* kUvicornListening = "Uvicorn running on http://{host}:{port}";

std::vector<std::pair<std::string, std::string>> identity(const std::vector<std::string>& types) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& t : types) out.emplace_back(t, t);
  return out;
}

ServerPreset vllm() {
  ServerPreset p{.name = "vllm", .binary = "vllm"};
  CommandConfig& c = p.command;
  c.server = "vLLM";
  // --no-enable-prefix-caching: a prefix cache hit would skip the prefill a probe measures (divergence's
  // cache-OFF path recomputes from scratch); kvsweep's own cache_prompt is llama.cpp's and not sent.
  c.argv = {"{binary}", "serve", "{model}", "--host", "{host}", "--port", "{port}", "--kv-cache-dtype", "{type_k}",
            "--max-model-len", "{ctx}", "--no-enable-prefix-caching", "--max-logprobs", "20", "--seed", "0"};
  // `vllm serve --help` (--kv-cache-dtype): one type for K and V; the TurboQuant presets name both
  // (k8v4 = 8-bit K, 4-bit V) and are swept as one type.
  c.types = {"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "nvfp4_ds_mla",
             "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc", "int4_per_token_head",
             "int8_per_token_head", "fp8_per_token_head", "nvfp4", "nvfp4_4over6"};
  c.spelling = identity(c.types);
  c.tied = true;
  c.reference = "auto/auto";
  c.ready_path = "/health";
  c.listening = kUvicornListening;
  // Every cache config field is a label of this gauge: vllm:cache_config_info{cache_dtype="fp8",…} 1.0
  c.confirm.http = "/metrics";
  c.confirm.format = "prometheus";
  c.confirm.metric = "vllm:cache_config_info";
  c.confirm.label = "cache_dtype";
  c.openai.tokenizer = "vllm";
  // Tool calls need --enable-auto-tool-choice and a model's --tool-call-parser: add them to server.args
  // and "tool_calls": true to openai.capabilities. Embeddings need an embedding model (--task embed).
  // prompt_logprobs: /v1/completions' "prompt_logprobs" (up to --max-logprobs, 20 by default).
  c.openai.prompt_logprobs = "vllm";
  c.openai.capabilities = {"chat", "token_prompts", "logprobs", "logprob_ids", "tokenize", "prompt_logprobs"};
  // return_tokens_as_token_ids: logprob tokens come as "token_id:N", so the alternatives carry their ids.
  c.openai.extra = {{"repetition_penalty", 1.0}, {"return_tokens_as_token_ids", true}};
  return p;
}

ServerPreset sglang() {
  ServerPreset p{.name = "sglang", .binary = "python3"};
  CommandConfig& c = p.command;
  c.server = "SGLang";
  // --disable-radix-cache: SGLang's prefix cache (the radix tree) would reuse a prompt's KV across requests.
  c.argv = {"{binary}", "-m", "sglang.launch_server", "--model-path", "{model}", "--host", "{host}", "--port", "{port}",
            "--kv-cache-dtype", "{type_k}", "--context-length", "{ctx}", "--disable-radix-cache", "--random-seed", "0"};
  c.types = {"auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16", "fp4_e2m1"};
  c.spelling = identity(c.types);
  c.tied = true;
  c.reference = "auto/auto";
  c.ready_path = "/health";
  c.listening = kUvicornListening;
  // GET /server_info: the server args, flattened, with the internal state.
  c.confirm.http = "/server_info";
  c.confirm.format = "json";
  c.confirm.pointer = "/kv_cache_dtype";
  c.openai.tokenizer = "none";
  // prompt_logprobs: the native /generate with return_logprob, logprob_start_len and top_logprobs_num.
  c.openai.prompt_logprobs = "sglang";
  c.openai.capabilities = {"chat", "token_prompts", "logprobs", "prompt_logprobs"};
  c.openai.extra = {{"repetition_penalty", 1.0}};
  return p;
}

ServerPreset tabbyapi() {
  ServerPreset p{.name = "tabbyapi", .binary = "python3"};
  CommandConfig& c = p.command;
  c.server = "TabbyAPI";
  // Run from TabbyAPI's checkout: "main.py" is its entry point (give its path in server.command when
  // kvsweep runs elsewhere). The model is a folder name under TabbyAPI's model_dir.
  c.argv = {"{binary}", "main.py", "--host", "{host}", "--port", "{port}", "--model-name", "{model}", "--cache-mode",
            "{type_k}", "--max-seq-len", "{ctx}", "--disable-auth", "true"};
  // ExLlamaV2's cache_mode: one setting for K and V (ExLlamaV3's "k_bits,v_bits" is a template edit:
  // "--cache-mode", "{type_k},{type_v}" with types 2…8).
  c.types = {"FP16", "Q8", "Q6", "Q4"};
  c.spelling = identity(c.types);
  c.tied = true;
  c.reference = "FP16/FP16";
  c.ready_path = "/health";
  c.listening = kUvicornListening;
  // GET /v1/model: the loaded model's card, its parameters holding cache_mode.
  c.confirm.http = "/v1/model";
  c.confirm.format = "json";
  c.confirm.pointer = "/parameters/cache_mode";
  c.openai.tokenizer = "tabbyapi";
  c.openai.capabilities = {"chat", "logprobs", "tokenize"};
  c.openai.extra = {{"repetition_penalty", 1.0}};
  return p;
}

ServerPreset llama_cpp_python() {
  ServerPreset p{.name = "llama-cpp-python", .binary = "python3"};
  CommandConfig& c = p.command;
  c.server = "llama-cpp-python";
  // Its own cache (--cache) is off by default: nothing to turn off.
  c.argv = {"{binary}", "-m", "llama_cpp.server", "--model", "{model}", "--host", "{host}", "--port", "{port}",
            "--type_k", "{type_k}", "--type_v", "{type_v}", "--flash_attn", "true", "--n_ctx", "{ctx}", "--seed", "0",
            "--verbose", "true"};
  // ggml's type numbers (ggml.h enum ggml_type), as --type_k/--type_v take them; K and V apart.
  c.types = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"};
  c.spelling = {{"f32", "0"},  {"f16", "1"},     {"bf16", "30"}, {"q8_0", "8"}, {"q4_0", "2"},
                {"q4_1", "3"}, {"iq4_nl", "20"}, {"q5_0", "6"},  {"q5_1", "7"}};
  c.tied = false;
  c.reference = "f16/f16";
  c.ready_path = "/v1/models";
  c.listening = kUvicornListening;
  // llama.cpp's own KV line, relayed by --verbose: "K (q8_0): … MiB, V (f16): … MiB" (older builds:
  // "KV self size = …, K (f16): …"); the type names are llama.cpp's, as the grid names them.
  c.confirm.log = R"(K \(([a-z0-9_]+)\):[^,]*, V \(([a-z0-9_]+)\))";
  c.openai.tokenizer = "none";
  c.openai.capabilities = {"chat", "logprobs"};
  c.openai.extra = {{"repeat_penalty", 1.0}};
  return p;
}

}  // namespace

const std::vector<ServerPreset>& server_presets() {
  static const std::vector<ServerPreset> presets = {vllm(), sglang(), tabbyapi(), llama_cpp_python()};
  return presets;
}

const ServerPreset* find_server_preset(const std::string& name) {
  for (const auto& p : server_presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> server_preset_names() {
  std::vector<std::string> out;
  for (const auto& p : server_presets()) out.push_back(p.name);
  return out;
}

}  // namespace kvsweep::config
