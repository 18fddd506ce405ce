/// bench_args and perplexity_args: which llama-server arguments llama-bench and llama-perplexity also
/// take, from one table of llama.cpp's flags.

#include <algorithm>
#include <string_view>

#include "kvsweep/probe/tool_args.hpp"

namespace kvsweep::probe {

namespace {

std::string same(std::string value) { return value; }

/// llama-server's comma-separated lists are '/'-separated in llama-bench (',' there means "sweep").
std::string list(std::string value) {
  std::replace(value.begin(), value.end(), ',', '/');
  return value;
}

/// -ot: llama-bench separates overrides with ';'.
std::string overrides(std::string value) {
  std::replace(value.begin(), value.end(), ',', ';');
  return value;
}

/// llama-server's words for -ngl are llama.cpp's numbers: auto is -1, all is -2.
std::string layers(std::string value) {
  if (value == "auto") return "-1";
  if (value == "all") return "-2";
  return value;
}

enum class Takes { value, nothing };
enum class Perplexity { takes, lacks };

/// One llama-server flag (every spelling), whether llama-perplexity takes it as the server spells it,
/// and llama-bench's flag for it (none: nullptr) with its value in llama-bench's spelling (a switch: "1").
struct ToolFlag {
  std::vector<std::string_view> names;
  Takes takes;
  Perplexity perplexity;
  const char* bench = nullptr;
  std::string (*rewrite)(std::string) = same;
};

const ToolFlag kFlags[] = {
    {{"-t", "--threads"}, Takes::value, Perplexity::takes, "-t"},
    {{"-tb", "--threads-batch"}, Takes::value, Perplexity::takes},
    {{"-b", "--batch-size"}, Takes::value, Perplexity::takes, "-b"},
    {{"-ub", "--ubatch-size"}, Takes::value, Perplexity::takes, "-ub"},
    {{"-fa", "--flash-attn"}, Takes::value, Perplexity::takes, "-fa"},
    {{"-ngl", "--gpu-layers", "--n-gpu-layers"}, Takes::value, Perplexity::takes, "-ngl", layers},
    {{"-sm", "--split-mode"}, Takes::value, Perplexity::takes, "-sm"},
    {{"-ts", "--tensor-split"}, Takes::value, Perplexity::takes, "-ts", list},
    {{"-mg", "--main-gpu"}, Takes::value, Perplexity::takes, "-mg"},
    {{"-dev", "--device"}, Takes::value, Perplexity::takes, "-dev", list},
    {{"--numa"}, Takes::value, Perplexity::takes, "--numa"},
    {{"-ot", "--override-tensor"}, Takes::value, Perplexity::takes, "-ot", overrides},
    {{"-ncmoe", "--n-cpu-moe"}, Takes::value, Perplexity::takes, "-ncmoe"},
    {{"-lm", "--load-mode"}, Takes::value, Perplexity::takes},
    {{"-C", "--cpu-mask"}, Takes::value, Perplexity::lacks, "-C"},
    {{"--poll"}, Takes::value, Perplexity::lacks, "--poll"},
    {{"--prio"}, Takes::value, Perplexity::lacks, "--prio"},
    {{"-nkvo", "--no-kv-offload"}, Takes::nothing, Perplexity::takes, "-nkvo"},
    {{"-kvo", "--kv-offload"}, Takes::nothing, Perplexity::takes},
    {{"--swa-full"}, Takes::nothing, Perplexity::takes},
    {{"-nr", "--no-repack"}, Takes::nothing, Perplexity::takes},
    {{"--repack"}, Takes::nothing, Perplexity::takes},
    {{"-cmoe", "--cpu-moe"}, Takes::nothing, Perplexity::takes},
    {{"--no-op-offload"}, Takes::nothing, Perplexity::takes, "-nopo"},
};

enum class Tool { perplexity, bench };

/// The row of `flag` when `tool` takes it; null for a flag it does not know (a server-only one).
const ToolFlag* find_flag(std::string_view flag, Tool tool) {
  for (const ToolFlag& f : kFlags) {
    if (std::find(f.names.begin(), f.names.end(), flag) == f.names.end()) continue;
    const bool takes = tool == Tool::perplexity ? f.perplexity == Perplexity::takes : f.bench != nullptr;
    return takes ? &f : nullptr;
  }
  return nullptr;
}

/// Walks llama-server's arguments: `add` gets each flag the tool takes (the argument as given, and its
/// value when separate, or nullopt), an unknown flag's value goes with it.
template <class Add>
void walk(const std::vector<std::string>& server_args, Tool tool, Add add) {
  for (std::size_t i = 0; i < server_args.size(); ++i) {
    const std::string& a = server_args[i];
    const std::string flag = a.substr(0, a.find('='));
    const bool inline_value = flag.size() != a.size();
    if (const ToolFlag* f = find_flag(flag, tool)) {
      const bool separate = f->takes == Takes::value && !inline_value && i + 1 < server_args.size();
      add(*f, a, flag, separate ? &server_args[++i] : nullptr);
    } else if (!inline_value && i + 1 < server_args.size() && !server_args[i + 1].starts_with("-")) {
      ++i;  // an unknown (server-only) flag's value goes with it
    }
  }
}

}  // namespace

std::vector<std::string> perplexity_args(const std::vector<std::string>& server_args) {
  std::vector<std::string> out;
  walk(server_args, Tool::perplexity, [&](const ToolFlag&, const std::string& arg, const std::string&, const std::string* value) {
    out.push_back(arg);
    if (value) out.push_back(*value);
  });
  return out;
}

std::vector<std::string> bench_args(const std::vector<std::string>& server_args) {
  std::vector<std::string> out;
  walk(server_args, Tool::bench, [&](const ToolFlag& f, const std::string& arg, const std::string& flag, const std::string* value) {
    if (f.takes == Takes::nothing) {
      out.push_back(f.bench);
      out.push_back("1");
      return;
    }
    const bool inline_value = flag.size() != arg.size();
    if (!inline_value && !value) return;  // the value is missing: llama-bench gets neither
    out.push_back(f.bench);
    out.push_back(f.rewrite(inline_value ? arg.substr(flag.size() + 1) : *value));
  });
  return out;
}

}  // namespace kvsweep::probe
