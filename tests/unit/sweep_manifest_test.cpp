// manifest.json as a type: every field read and written back, and a manifest with keys this
// kvsweep does not know, or known keys holding another type, written back byte for byte.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/probe/record.hpp"
#include "kvsweep/probe/record_fields.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace {

using kvsweep::sweep::Manifest;
using kvsweep::sweep::ManifestCell;
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
    "cells": [{"model": "tiny", "type_k": "f16", "type_v": "f16", "outcome": "ok"}], "journaled": 1,
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
  EXPECT_EQ(m->journaled, 1);
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

// A cell as the runner writes it (sweep/run/runner_store.cpp), with the attention evidence of a CUDA log.
json runner_cell() {
  return json::parse(R"js({
    "model": "m", "variant": "rot-off", "type_k": "q4_0", "type_v": "f16", "id": "m-rot-off-q4_0-f16",
    "is_reference": false, "outcome": "ok", "message": "", "items_ok": 3, "items_failed": 0, "items_skipped": 0,
    "items_settled": 2, "restarts": 0, "ready_s": 0.62, "wall_s": 4.0, "stop_s": 0.2, "items_wall_s": 3.1,
    "server_ms": 2900.5, "started_at": "2026-11-27T07:00:00.000Z", "finished_at": "2026-11-27T07:00:04.000Z",
    "load_avg": 1.5, "slot": 1, "slot_env": {"CUDA_VISIBLE_DEVICES": "1"},
    "lifecycle": [{"event": "server_ready", "at": 0.62}],
    "effective": {"found": true, "declared": false, "type_k": "q4_0", "type_v": "f16", "k_mib": 4.5, "v_mib": 8.0,
                  "kv_mib": 12.5, "flash_attn": "enabled", "attn_rot_k": 0, "attn_rot_v": 0, "n_ctx": 4096,
                  "attention": {"path": "vec", "reason": "r", "splits": {"graph": 2}, "fa_quants": "all"},
                  "memory": [{"device": "CUDA0", "gpu": true, "kv_mib": 12.5}],
                  "path": "fallback?", "path_reason": "more splits than f16/f16"}
  })js");
}

TEST(ManifestCell, EveryFieldTheRunnerWritesIsTypedAndWrittenBackAsRead) {
  const json j = runner_cell();
  const auto c = ManifestCell::from_json(j);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->key().id(), "m-rot-off-q4_0-f16");
  EXPECT_EQ(c->outcome_text(), "ok");
  EXPECT_EQ(c->items_settled, 2);
  EXPECT_EQ(c->ready_s, 0.62);
  EXPECT_EQ(c->load_avg, 1.5);
  ASSERT_TRUE(c->effective);
  EXPECT_TRUE(c->effective->reported());
  EXPECT_EQ(c->effective->kv_mib, 12.5);
  EXPECT_EQ(c->effective->attn_rot_k, 0);
  EXPECT_EQ(c->effective->path, "fallback?");
  EXPECT_EQ(c->effective->attention["fa_quants"], "all");
  EXPECT_TRUE(c->extra.empty()) << c->extra.dump();
  EXPECT_TRUE(c->effective->extra.empty()) << c->effective->extra.dump();
  EXPECT_EQ(to_json(*c).dump(2), j.dump(2));
}

TEST(ManifestCell, UnknownKeysMistypedValuesAndIntegerSecondsAreWrittenBackAsRead) {
  json j = runner_cell();
  j["n_ctx"] = 2048;             // a cell's own context (a hand-written manifest): not a field, kept
  j["ready_s"] = 2;              // an integer where kvsweep writes a double: read as 2, written as 2
  j["outcome"] = 7;              // another type: kept, and the outcome reads as absent
  j["effective"]["kv_mib"] = 12;
  j["effective"]["future"] = {{"x", 1}};
  const auto c = ManifestCell::from_json(j);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ready_s, 2.0);
  EXPECT_EQ(c->effective->kv_mib, 12.0);
  EXPECT_EQ(c->outcome_text(), "");
  EXPECT_EQ(c->extra.value("n_ctx", 0), 2048);
  EXPECT_EQ(to_json(*c).dump(2), j.dump(2));
  // A manifest whose cells are not all objects keeps them as read, untyped.
  json m = full_manifest();
  m["cells"].push_back(42);
  const auto read = Manifest::from_json(m);
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->cell_list().empty());
  EXPECT_EQ(to_json(*read).dump(2), m.dump(2));
}

TEST(Record, EveryFieldOfTheListIsWrittenAndReadBack) {
  kvsweep::probe::Record failed;
  failed.cell = {"m", "rot-off", "q4_0", "f16"};
  failed.probe = "recall-long";
  failed.kind = "recall";
  failed.item = "f3";
  failed.status = kvsweep::probe::ItemStatus::failed;
  failed.failure = "crashed";
  failed.spec = {{"function", "f3"}};
  failed.wall_s = 1.25;
  failed.attempt = 2;
  failed.time = "2026-11-27T07:00:00Z";
  failed.error = "the server died";
  failed.http_status = 500;
  failed.log_tail = "CUDA error";
  const json j = to_json(failed);
  std::size_t written = 0;
  for (const auto& field : kvsweep::probe::record_fields()) written += j.contains(std::string(field.name));
  EXPECT_EQ(written, j.size()) << "to_json writes only the list's fields";
  const auto back = kvsweep::probe::Record::from_json(j);
  ASSERT_TRUE(back);
  EXPECT_EQ(to_json(*back), j);
  EXPECT_EQ(back->cell, failed.cell);
  EXPECT_EQ(back->http_status, 500);
  EXPECT_EQ(back->status, kvsweep::probe::ItemStatus::failed);
  EXPECT_EQ(back->failure, "crashed");
  EXPECT_EQ(j["status"], "crashed");
  EXPECT_EQ(back->log_tail, "CUDA error");
  // ok and skipped records carry the other fields.
  kvsweep::probe::Record ok = failed;
  ok.status = kvsweep::probe::ItemStatus::ok;
  ok.failure.clear();
  ok.error.reset();
  ok.http_status = 0;
  ok.log_tail.reset();
  ok.response = {{"content", "x"}};
  ok.metrics = {{"passed", true}};
  ok.timings = {{"prompt_n", 3}};
  EXPECT_EQ(to_json(*kvsweep::probe::Record::from_json(to_json(ok))), to_json(ok));
  kvsweep::probe::Record skipped = failed;
  skipped.status = kvsweep::probe::ItemStatus::skipped;
  skipped.failure.clear();
  skipped.reason = "settled";
  skipped.adaptive = {{"items", 4}};
  const auto settled = kvsweep::probe::Record::from_json(to_json(skipped));
  ASSERT_TRUE(settled);
  EXPECT_TRUE(settled->settled());
  EXPECT_EQ(settled->adaptive, skipped.adaptive);
  // A lenient read: a field of another type reads as empty, a line without a cell is no record.
  const auto lenient = kvsweep::probe::Record::from_json({{"cell", json::object()}, {"attempt", "two"}, {"metrics", 3}});
  ASSERT_TRUE(lenient);
  EXPECT_EQ(lenient->attempt, 0);
  EXPECT_TRUE(lenient->metrics.is_object());
  EXPECT_FALSE(kvsweep::probe::Record::from_json({{"probe", "x"}}));
}

}  // namespace
