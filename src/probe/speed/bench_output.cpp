/// parse_bench_output: the tests in llama-bench's JSON output.

#include "kvsweep/probe/tool_text.hpp"
#include "kvsweep/probe/speed/speed.hpp"

namespace kvsweep::probe {

namespace {

using nlohmann::json;

bool is_test(const json& j) {
  return j.is_object() && j.contains("avg_ts") && j["avg_ts"].is_number() && j.contains("n_prompt") &&
         j["n_prompt"].is_number_integer() && j.contains("n_gen") && j["n_gen"].is_number_integer();
}

BenchTest test_of(const json& j) {
  BenchTest t;
  t.n_prompt = j["n_prompt"].get<int>();
  t.n_gen = j["n_gen"].get<int>();
  t.n_depth = j.value("n_depth", 0);
  t.avg_ts = j["avg_ts"].get<double>();
  t.stddev_ts = j.contains("stddev_ts") && j["stddev_ts"].is_number() ? j["stddev_ts"].get<double>() : 0.0;
  t.type_k = j.value("type_k", "");
  t.type_v = j.value("type_v", "");
  t.raw = j;
  return t;
}

}  // namespace

core::Expected<std::vector<BenchTest>> parse_bench_output(std::string_view output) {
  std::vector<BenchTest> tests;
  // `-o json`: one array (no stderr line falls inside it when the output is stdout alone).
  const auto first = output.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && output[first] == '[') {
    json all = json::parse(output.substr(first), nullptr, false);
    if (all.is_array()) {
      for (const auto& j : all)
        if (is_test(j)) tests.push_back(test_of(j));
    }
  }
  // `-o jsonl`: one object per line, between whatever llama-bench wrote to stderr.
  if (tests.empty()) {
    std::size_t pos = 0;
    while (pos < output.size()) {
      std::size_t end = output.find('\n', pos);
      if (end == std::string_view::npos) end = output.size();
      const std::string_view line = output.substr(pos, end - pos);
      pos = end + 1;
      const auto start = line.find('{');
      if (start == std::string_view::npos) continue;
      json j = json::parse(line.substr(start), nullptr, false);
      if (is_test(j)) tests.push_back(test_of(j));
    }
  }
  if (tests.empty())
    return core::fail(core::ErrorKind::parse, "llama-bench printed no test result (expected JSON with avg_ts, "
                                              "n_prompt, n_gen); last lines:" + output_tail(output));
  return tests;
}

}  // namespace kvsweep::probe
