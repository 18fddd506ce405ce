#include "kvsweep/cli/main.hpp"

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <iostream>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/core/log.hpp"
#include "kvsweep/core/redact.hpp"
#include "kvsweep/core/version.hpp"
#include "kvsweep/process/child.hpp"

namespace kvsweep::cli {

namespace {

std::atomic<bool> g_cancel{false};
volatile sig_atomic_t g_signal = 0;

void on_signal(int sig) {
  if (g_signal != 0) {
    // Second signal: leave now (children go with us via PR_SET_PDEATHSIG, but be explicit).
    process::kill_all_children(SIGKILL);
    ::_exit(128 + sig);
  }
  g_signal = sig;
  g_cancel.store(true);
  // Kill the servers at once so in-flight requests fail fast; nothing half-done is recorded.
  process::kill_all_children(SIGKILL);
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

}  // namespace

const std::atomic<bool>& cancel_flag() { return g_cancel; }
int interrupted_exit_code() { return g_signal ? 128 + g_signal : core::exit_code::interrupted; }

int main(int argc, char** argv) {
  CLI::App app{
      "kvsweep — measure how an inference server's KV-cache precision changes what a model does.\n"
      "Launches the server once per -ctk × -ctv cell, runs probes over HTTP, records every item,\n"
      "and reports grids against a reference cell.",
      "kvsweep"};
  app.set_version_flag("--version", std::string(core::version()) + " (git " + std::string(core::git_sha()) + ")");
  app.require_subcommand(1);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "More log output on stderr");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");
  app.footer(
      "Examples:\n"
      "  kvsweep tiny-model -o tiny.gguf                  # the synthetic model used by the demo\n"
      "  kvsweep run configs/demo.json -o runs/demo       # a sweep\n"
      "  kvsweep run --resume runs/demo                   # finish an interrupted sweep\n"
      "  kvsweep run configs/adaptive.json                # sweep.adaptive: each cell stops once its verdicts are settled\n"
      "  kvsweep run configs/rotation.json --only variant=rot-off   # one variant of the grid\n"
      "  kvsweep report runs/demo                         # Markdown report on stdout\n"
      "Exit codes: 0 ok, 1 regression (compare), failed cells or a failed run (run --strict) or nothing measured "
      "(recommend), 2 error, 130 interrupted.");

  Commands commands;
  register_commands(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : core::exit_code::error;
  }
  core::setup_logging(quiet ? core::Verbosity::quiet : verbose ? core::Verbosity::verbose : core::Verbosity::normal);
  install_signal_handlers();
  try {
    return commands.run();
  } catch (const core::FatalError& e) {
    std::fprintf(stderr, "kvsweep: error: %s\n", core::redact(e.what()).c_str());
    return core::exit_code::error;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvsweep: internal error: %s\n", core::redact(e.what()).c_str());
    return core::exit_code::error;
  }
}

}  // namespace kvsweep::cli
