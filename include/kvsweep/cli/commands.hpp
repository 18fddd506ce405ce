#pragma once
/// The subcommands: each registers its options on the CLI11 app and sets the action to run.

#include <atomic>
#include <functional>

#include <CLI/CLI.hpp>

namespace kvsweep::cli {

/// Holds the chosen subcommand's action (set by the parse callbacks).
struct Commands {
  std::function<int()> action;
  int run() const { return action ? action() : 2; }
};

void register_commands(CLI::App& app, Commands& commands);

// One registration function per command family (cli/<name>.cpp).
void register_run(CLI::App& app, Commands& commands);
void register_tiny_model(CLI::App& app, Commands& commands);
void register_report(CLI::App& app, Commands& commands);  // report and compare
void register_merge(CLI::App& app, Commands& commands);
void register_recall_tools(CLI::App& app, Commands& commands);  // corpus, extract, sample, score
void register_recommend(CLI::App& app, Commands& commands);
void register_published(CLI::App& app, Commands& commands);  // published export

/// A number option's check: CLI11's PositiveNumber and Range let "nan" through (every comparison
/// with NaN is false), which then silently drops the limit; this refuses nan and inf.
CLI::Validator finite_number();

/// Set by the signal handler; long work polls it.
const std::atomic<bool>& cancel_flag();
/// 128 + the signal that interrupted us (130 for SIGINT).
int interrupted_exit_code();

}  // namespace kvsweep::cli
