/// bench_args: which llama-server arguments llama-bench also takes, in llama-bench's spelling.

#include <algorithm>
#include <map>

#include "kvsweep/probe/speed.hpp"

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

/// A server flag with a value: llama-bench's flag and how its value is spelt there.
struct Valued {
  const char* bench;
  std::string (*rewrite)(std::string);
};

}  // namespace

std::vector<std::string> bench_args(const std::vector<std::string>& server_args) {
  static const std::map<std::string, Valued> with_value = {
      {"-t", {"-t", same}},          {"--threads", {"-t", same}},       {"-b", {"-b", same}},
      {"--batch-size", {"-b", same}}, {"-ub", {"-ub", same}},           {"--ubatch-size", {"-ub", same}},
      {"-fa", {"-fa", same}},        {"--flash-attn", {"-fa", same}},   {"-ngl", {"-ngl", layers}},
      {"--gpu-layers", {"-ngl", layers}}, {"--n-gpu-layers", {"-ngl", layers}}, {"-sm", {"-sm", same}},
      {"--split-mode", {"-sm", same}}, {"-ts", {"-ts", list}},          {"--tensor-split", {"-ts", list}},
      {"-mg", {"-mg", same}},        {"--main-gpu", {"-mg", same}},     {"-dev", {"-dev", list}},
      {"--device", {"-dev", list}},  {"--numa", {"--numa", same}},      {"-ot", {"-ot", overrides}},
      {"--override-tensor", {"-ot", overrides}}, {"-ncmoe", {"-ncmoe", same}}, {"--n-cpu-moe", {"-ncmoe", same}},
      {"-C", {"-C", same}},          {"--cpu-mask", {"-C", same}},      {"--poll", {"--poll", same}},
      {"--prio", {"--prio", same}}};
  static const std::map<std::string, const char*> flags = {
      {"-nkvo", "-nkvo"}, {"--no-kv-offload", "-nkvo"}, {"--no-op-offload", "-nopo"}};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < server_args.size(); ++i) {
    const std::string& a = server_args[i];
    const std::string flag = a.substr(0, a.find('='));
    const bool inline_value = flag.size() != a.size();
    if (auto v = with_value.find(flag); v != with_value.end()) {
      std::string value;
      if (inline_value) value = a.substr(flag.size() + 1);
      else if (i + 1 < server_args.size()) value = server_args[++i];
      else continue;
      out.push_back(v->second.bench);
      out.push_back(v->second.rewrite(std::move(value)));
    } else if (auto f = flags.find(flag); f != flags.end()) {
      out.push_back(f->second);
      out.push_back("1");
    } else if (!inline_value && i + 1 < server_args.size() && !server_args[i + 1].starts_with("-")) {
      ++i;  // an unknown (server-only) flag's value goes with it
    }
  }
  return out;
}

}  // namespace kvsweep::probe
