#pragma once
/// The command line: CLI11 subcommands, exit codes, fatal errors printed once.

namespace kvsweep::cli {
int main(int argc, char** argv);
}  // namespace kvsweep::cli
