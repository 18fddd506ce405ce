#pragma once
// A small literal run directory for the report tests: one model, a 2 × 2 grid of f16 / q4_0 with
// q4_0/q4_0 failed to load, a `complete` probe (deterministic) and a 3-hop `telephone` probe, a
// retried item and an item that never succeeded. Written to a fresh temporary directory.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvsweep::report::testing {

inline const char* const kManifest = R"json({
  "schema_version": 1, "kind": "kvsweep-run", "name": "golden", "config_hash": "0123456789abcdef", "n_ctx": 4096,
  "kvsweep": {"version": "0.1.0", "git_sha": "a26fecac9b7e"},
  "server": {"backend": "llama-server", "version": "0.5.0-dev (build 1, commit de3ff81)", "built_with": "GNU 12.2.0"},
  "host": {"hostname": "testhost", "cpu": "Test CPU", "cores": 2, "gpus": []},
  "models": [{"name": "tiny", "path": "/models/tiny.gguf", "size": 1000, "sha256": "1996269170e4e3d25d40e6dbdc78ea5870797ed4bba0f24c77214cb40d7d346c"}],
  "probes": [
    {"name": "complete", "kind": "complete", "items": 4,
     "metrics": [{"name": "match_reference", "higher_is_better": true}, {"name": "common_prefix_chars", "higher_is_better": true}]},
    {"name": "telephone", "kind": "telephone", "items": 2,
     "metrics": [{"name": "final_similarity", "higher_is_better": true}, {"name": "mean_similarity", "higher_is_better": true},
                 {"name": "empty_hops", "higher_is_better": false}]}
  ],
  "cells": [
    {"model": "tiny", "type_k": "f16", "type_v": "f16", "id": "tiny-f16-f16", "is_reference": true, "outcome": "ok", "message": "",
     "effective": {"type_k": "f16", "type_v": "f16", "k_mib": 2.0, "v_mib": 2.0, "kv_mib": 4.0}, "ready_s": 0.5},
    {"model": "tiny", "type_k": "f16", "type_v": "q4_0", "id": "tiny-f16-q4_0", "is_reference": false, "outcome": "ok", "message": "",
     "effective": {"type_k": "f16", "type_v": "q4_0", "k_mib": 2.0, "v_mib": 0.56, "kv_mib": 2.56}, "ready_s": 0.25},
    {"model": "tiny", "type_k": "q4_0", "type_v": "f16", "id": "tiny-q4_0-f16", "is_reference": false, "outcome": "crashed",
     "message": "server died during p10; restarted once", "effective": {"type_k": "q4_0", "type_v": "f16", "k_mib": 0.56, "v_mib": 2.0, "kv_mib": 2.56}, "ready_s": 0.75},
    {"model": "tiny", "type_k": "q4_0", "type_v": "q4_0", "id": "tiny-q4_0-q4_0", "is_reference": false, "outcome": "load_failed",
     "message": "llama-server exited with status 1: | V cache quantization requires flash_attn", "effective": {}}
  ],
  "config": {"name": "golden",
             "grid": {"k": ["f16", "q4_0"], "v": ["f16", "q4_0"], "reference": "f16/f16"},
             "probes": [{"kind": "complete", "max_tokens": 32}, {"kind": "telephone", "hops": 3, "threshold": 0.8}]},
  "status": "complete", "started_at": "2026-01-02T03:04:05Z", "finished_at": "2026-01-02T03:09:05Z"
})json";

inline nlohmann::json make_record(const std::string& k, const std::string& v, const std::string& probe,
                                  const std::string& item, const std::string& status, nlohmann::json metrics,
                                  nlohmann::json response = nlohmann::json::object(), int attempt = 1,
                                  const std::string& error = "") {
  nlohmann::json r = {{"schema_version", 1},
                      {"cell", {{"model", "tiny"}, {"type_k", k}, {"type_v", v}}},
                      {"probe", probe},
                      {"kind", probe},
                      {"item", item},
                      {"status", status},
                      {"spec", {{"prompt", "Once upon a time"}}},
                      {"response", std::move(response)},
                      {"metrics", std::move(metrics)},
                      {"timings",
                       {{"prompt_n", 5}, {"cache_n", 0}, {"prompt_ms", 1.5}, {"predicted_n", 32}, {"predicted_ms", 40.25}}},
                      {"wall_s", 0.125},
                      {"attempt", attempt},
                      {"time", "2026-01-02T03:05:00Z"}};
  if (!error.empty()) r["error"] = error;
  return r;
}

inline nlohmann::json complete_metrics(int match, int prefix) {
  return {{"match_reference", match}, {"common_prefix_chars", prefix}};
}

/// A telephone record whose three hops have the given similarities to the original.
inline nlohmann::json telephone_record(const std::string& k, const std::string& v, const std::string& item,
                                       std::vector<double> sims) {
  nlohmann::json hops = nlohmann::json::array();
  double sum = 0;
  for (std::size_t i = 0; i < sims.size(); ++i) {
    hops.push_back({{"hop", i + 1}, {"text", "hop text"}, {"sim_original", sims[i]}, {"sim_previous", 0.9}});
    sum += sims[i];
  }
  nlohmann::json metrics = {{"final_similarity", sims.back()},
                            {"mean_similarity", sum / static_cast<double>(sims.size())},
                            {"empty_hops", 0}};
  return make_record(k, v, "telephone", item, "ok", metrics, {{"hops", hops}, {"completed_hops", sims.size()}});
}

inline std::vector<nlohmann::json> fixture_records() {
  return {
      make_record("f16", "f16", "complete", "p1", "ok", complete_metrics(1, 100), {{"content", "a \"quoted\", text"}}),
      make_record("f16", "f16", "complete", "p2", "ok", complete_metrics(1, 120)),
      make_record("f16", "f16", "complete", "p3", "ok", complete_metrics(1, 90)),
      make_record("f16", "f16", "complete", "p10", "ok", complete_metrics(1, 110)),
      make_record("f16", "q4_0", "complete", "p1", "ok", complete_metrics(1, 100)),
      make_record("f16", "q4_0", "complete", "p2", "ok", complete_metrics(1, 120)),
      make_record("f16", "q4_0", "complete", "p3", "timeout", nlohmann::json::object(), nlohmann::json::object(), 1,
                  "no answer within 120 s, will retry"),
      make_record("f16", "q4_0", "complete", "p3", "ok", complete_metrics(0, 40), nlohmann::json::object(), 2),
      make_record("f16", "q4_0", "complete", "p10", "ok", complete_metrics(1, 110)),
      make_record("q4_0", "f16", "complete", "p1", "ok", complete_metrics(0, 10)),
      make_record("q4_0", "f16", "complete", "p2", "ok", complete_metrics(1, 120)),
      make_record("q4_0", "f16", "complete", "p3", "ok", complete_metrics(0, 30)),
      make_record("q4_0", "f16", "complete", "p10", "crashed", nlohmann::json::object(), nlohmann::json::object(), 1,
                  "server died"),
      telephone_record("f16", "f16", "t0-s42", {0.95, 0.9, 0.88}),
      telephone_record("f16", "f16", "t0-s137", {0.97, 0.93, 0.9}),
      telephone_record("f16", "q4_0", "t0-s42", {0.9, 0.8, 0.7}),
      telephone_record("f16", "q4_0", "t0-s137", {0.92, 0.85, 0.75}),
      telephone_record("q4_0", "f16", "t0-s42", {0.96, 0.94, 0.93}),
      telephone_record("q4_0", "f16", "t0-s137", {0.95, 0.92, 0.92}),
  };
}

/// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    m_path = std::filesystem::temp_directory_path() /
             ("kvsweep-" + name + "-" + std::to_string(::getpid()) + "-" +
              std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    std::filesystem::remove_all(m_path);
    std::filesystem::create_directories(m_path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// Writes manifest.json and records.jsonl (one JSON object per line) into `dir`.
inline void write_run(const std::filesystem::path& dir, const nlohmann::json& manifest,
                      const std::vector<nlohmann::json>& records) {
  write_text(dir / "manifest.json", manifest.dump(2) + "\n");
  std::string lines;
  for (const auto& r : records) lines += r.dump() + "\n";
  write_text(dir / "records.jsonl", lines);
}

inline void write_fixture_run(const std::filesystem::path& dir) {
  write_run(dir, nlohmann::json::parse(kManifest), fixture_records());
}

/// Compares `actual` with tests/data/report/<name>; KVSWEEP_UPDATE_GOLDEN=1 rewrites the file instead.
inline void expect_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path path = std::filesystem::path(KVSWEEP_TEST_DATA) / "report" / name;
  if (const char* update = std::getenv("KVSWEEP_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    write_text(path, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing; run with KVSWEEP_UPDATE_GOLDEN=1 to create it";
  const std::string expected = read_text(path);
  EXPECT_EQ(actual, expected) << "output differs from " << path
                              << " (KVSWEEP_UPDATE_GOLDEN=1 rewrites it; review the diff before committing)";
}

}  // namespace kvsweep::report::testing
