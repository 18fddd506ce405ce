// manifest.json as a type (issue 40): every field read and written back, and a manifest with keys this
// kvsweep does not know, or known keys holding another type, written back byte for byte.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/sweep/store/manifest.hpp"

namespace {

using kvsweep::sweep::Manifest;
using nlohmann::json;

// As the runner writes one (abridged documents), with a merge's fields.
json full_manifest() {
  return json::parse(R"js({
    "schema_version": 1, "kind": "kvsweep-run", "name": "demo",
    "config": {"grid": {"k": ["f16", "q8_0"]}}, "config_file": "/c/demo.json", "config_hash": "abc123",
    "kvsweep": {"version": "0.9.0", "git_sha": "deadbeef"},
    "server": {"backend": "llama-server", "version": "b1 (commit 1)"},
    "build_changed_from": "llama-server b0", "variant_servers": {"rot": {"version": "b2"}},
    "host": {"hostname": "h", "cpu": "c"},
    "server_env": {"CUDA_VISIBLE_DEVICES": "0", "LLAMA_API_KEY": "<redacted>", "LLAMA_ATTN_ROT_DISABLE": "1"},
    "started_at": "2026-11-26T12:00:00Z", "updated_at": "2026-11-26T12:05:00Z",
    "finished_at": "2026-11-26T12:05:00Z", "status": "complete", "n_ctx": 4096,
    "shard": {"index": 1, "count": 3},
    "models": [{"name": "tiny", "path": "/m/tiny.gguf", "is_file": true, "size": 7, "sha256": "00"}],
    "probes": [{"name": "complete", "kind": "complete", "items": 4}],
    "embedder": {"model": "minilm"},
    "cells": [{"model": "tiny", "type_k": "f16", "type_v": "f16", "outcome": "ok"}],
    "merged_from": [{"dir": "/r/a", "shard": null, "status": "complete"}], "build_change_allowed": true
  })js");
}

TEST(Manifest, EveryFieldIsReadAndWrittenBackAsRead) {
  const json j = full_manifest();
  const auto m = Manifest::from_json(j);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->schema_version, 1);
  EXPECT_EQ(m->name, "demo");
  EXPECT_EQ(m->config_hash, "abc123");
  EXPECT_EQ(m->status_text(), "complete");
  EXPECT_EQ(m->n_ctx, 4096);
  ASSERT_TRUE(m->shard);
  EXPECT_EQ(m->shard->index, 1);
  EXPECT_EQ(m->shard->count, 3);
  EXPECT_EQ(m->build_change_allowed, true);
  EXPECT_EQ(m->cell_list().size(), 1u);
  EXPECT_EQ(m->server["backend"], "llama-server");
  ASSERT_TRUE(m->server_env);
  EXPECT_EQ(m->server_env->at("LLAMA_ATTN_ROT_DISABLE"), "1");
  EXPECT_TRUE(m->extra.empty());
  EXPECT_EQ(to_json(*m).dump(2), j.dump(2));
}

TEST(Manifest, UnknownKeysAndKnownKeysOfAnotherTypeRoundTrip) {
  json j = full_manifest();
  j["env"] = {{"CUDA_VISIBLE_DEVICES", "0"}};  // a newer kvsweep's key
  j["n_ctx"] = "4096";                          // a string where an int belongs
  j["shard"] = {{"index", 0}, {"count", 2}, {"of", "x"}};
  j["embedder"] = nullptr;
  j["server_env"] = {{"GGML_SCHED_MAX_COPIES", 4}};  // a number where the values are strings
  const auto m = Manifest::from_json(j);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->n_ctx);
  EXPECT_FALSE(m->shard);
  EXPECT_FALSE(m->server_env);
  EXPECT_TRUE(m->embedder.is_null());
  EXPECT_EQ(m->extra.size(), 5u);
  EXPECT_EQ(to_json(*m).dump(2), j.dump(2));
}

TEST(Manifest, AbsentFieldsStayAbsentAndANonObjectIsNoManifest) {
  const auto m = Manifest::from_json(json::object());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->name);
  EXPECT_FALSE(m->server_env);
  EXPECT_EQ(m->status_text(), "");
  EXPECT_TRUE(m->cell_list().empty());
  EXPECT_EQ(to_json(*m), json::object());
  EXPECT_FALSE(Manifest::from_json(json::array()));
  EXPECT_FALSE(Manifest::from_json(json("manifest")));
}

TEST(Manifest, AnOlderManifestWithoutServerEnvRoundTripsWithoutOne) {
  json j = full_manifest();
  j.erase("server_env");
  const auto m = Manifest::from_json(j);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->server_env);
  EXPECT_EQ(to_json(*m).dump(2), j.dump(2));
  EXPECT_FALSE(to_json(*m).contains("server_env"));
  // An empty environment is recorded as such, not dropped.
  j["server_env"] = json::object();
  const auto empty = Manifest::from_json(j);
  ASSERT_TRUE(empty && empty->server_env);
  EXPECT_EQ(to_json(*empty).dump(2), j.dump(2));
}

}  // namespace
