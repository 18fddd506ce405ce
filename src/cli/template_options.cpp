#include "kvsweep/cli/template_options.hpp"

#include <unistd.h>

#include <filesystem>

#include "kvsweep/cli/capability_check.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/process/child.hpp"

namespace kvsweep::cli {

namespace {

/// A launch template's binary ({binary}): a path as given, else PATH, else KVSWEEP_LLAMA_BIN (a template
/// driving llama-server).
std::string resolve_template_binary(const config::ServerConfig& server) {
  if (server.binary.empty()) return {};
  std::string found = process::which(server.binary);
  if (found.empty()) found = process::find_llama_tool(server.binary);
  if (found.empty())
    throw core::FatalError("server binary '" + server.binary + "' not found for " + server.command.server +
                           (server.command.preset.empty() ? "" : " (preset " + server.command.preset + ")") +
                           ": install it, put it on PATH, or set server.binary to its path");
  return found;
}

/// The program a launch template starts (its argv[0], {binary} filled in) exists and is executable
/// now, so that a missing or non-executable one fails the dry run and the run before any cell, not
/// every cell late; a bare name is looked up on PATH as the launch will.
void check_template_program(const config::ServerConfig& server, const std::string& binary) {
  const auto& argv = server.command.argv;
  if (argv.empty()) return;
  std::string program = argv.front();
  if (const auto at = program.find("{binary}"); at != std::string::npos) program.replace(at, 8, binary);
  const std::string what = "the program of " + server.command.server + "'s command (server.command[0]) '" + program + "'";
  if (program.find('/') == std::string::npos) {
    if (process::which(program).empty())
      throw core::FatalError(what + " is not found on PATH: install it, or give its path");
    return;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(program, ec))
    throw core::FatalError(what + (std::filesystem::exists(program, ec) ? " is not a file" : " is not found"));
  if (::access(program.c_str(), X_OK) != 0)
    throw core::FatalError(what + " is not executable (chmod +x it, or give another)");
}

}  // namespace

server::TemplateOptions template_options(const config::ServerConfig& server) {
  const config::CommandConfig& c = server.command;
  server::TemplateOptions o;
  o.who = c.server;
  o.command = c.argv;
  o.binary = resolve_template_binary(server);
  check_template_program(server, o.binary);
  o.env = server.env;
  o.spelling = c.spelling;
  o.ready_path = c.ready_path;
  o.ready_status = c.ready_status;
  o.listening = c.listening;
  using Source = server::KvConfirm::Source;
  server::KvConfirm& k = o.confirm;
  if (c.confirm.log == "llama.cpp") {
    k.source = Source::llama_log;
  } else if (!c.confirm.log.empty()) {
    k.source = Source::log_regex;
    k.pattern = c.confirm.log;
  } else if (!c.confirm.http.empty()) {
    k.source = c.confirm.format == "prometheus" ? Source::http_prometheus : Source::http_json;
    k.path = c.confirm.http;
    k.pointer = c.confirm.pointer;
    k.pointer_v = c.confirm.pointer_v;
    k.metric = c.confirm.metric;
    k.label = c.confirm.label;
  }
  o.api.model = c.openai.model;
  o.api.capabilities = server_capabilities(server);
  o.api.tokenizer = server::parse_tokenizer_api(c.openai.tokenizer).value_or(server::TokenizerApi::none);
  o.api.prompt_logprobs = server::parse_prompt_logprobs_api(c.openai.prompt_logprobs).value_or(server::PromptLogprobsApi::none);
  o.api.cache_prompt = c.openai.cache_prompt;
  o.api.extra = c.openai.extra;
  return o;
}

}  // namespace kvsweep::cli
