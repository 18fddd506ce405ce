// Memory per device at a context, what --vram compares, and a recommendation that states its path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/report/analysis/cost_memory.hpp"
#include "kvsweep/report/output/csv.hpp"
#include "kvsweep/report/analysis/recommend.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/analysis/tables.hpp"

using ::testing::HasSubstr;

namespace kvsweep::report {
namespace {

using nlohmann::json;

json buffers(const std::string& device, bool gpu, double model, double kv, double compute) {
  return {{"device", device}, {"gpu", gpu}, {"model_mib", model}, {"kv_mib", kv}, {"compute_mib", compute}};
}

/// One cell on a GPU: its model on CUDA0 and CPU_Mapped, KV on CUDA0, compute on CUDA0 and CUDA_Host.
json cell(const std::string& k, const std::string& v, double kv_mib, double gpu_compute, const std::string& path) {
  return {{"model", "m"}, {"type_k", k}, {"type_v", v}, {"id", "m-" + k + "-" + v}, {"is_reference", k == "f16" && v == "f16"},
          {"outcome", "ok"},
          {"effective",
           {{"type_k", k}, {"type_v", v}, {"k_mib", kv_mib / 2}, {"v_mib", kv_mib / 2}, {"kv_mib", kv_mib},
            {"path", path}, {"path_reason", path == "converted" ? "no kernel; remedy: add " + k + "-" + v : "compiled"},
            {"memory", {buffers("CUDA0", true, 100, kv_mib, gpu_compute), buffers("CPU_Mapped", false, 50, 0, 0),
                        buffers("CUDA_Host", false, 0, 0, 5)}}}}};
}

json record(const std::string& k, const std::string& v, int item) {
  return {{"cell", {{"model", "m"}, {"type_k", k}, {"type_v", v}}}, {"probe", "complete"}, {"kind", "complete"},
          {"item", "i" + std::to_string(item)}, {"status", "ok"}, {"metrics", {{"match_reference", 1}}}};
}

/// f16/f16 reference; q8_0/q8_0 (vec) and q4_0/q4_0 (converted, its compute buffer larger) both answer
/// like it on 60 items.
RunData gpu_run() {
  json manifest = {
      {"name", "gpu"},
      {"n_ctx", 4096},
      {"probes", {{{"name", "complete"}, {"kind", "complete"},
                   {"metrics", {{{"name", "match_reference"}, {"direction", "higher"}, {"kind", "binary"}, {"role", "quality"}}}}}}},
      {"cells", {cell("f16", "f16", 400, 300, "vec"), cell("q8_0", "q8_0", 212.5, 300, "vec"),
                 cell("q4_0", "q4_0", 112.5, 900, "converted")}},
      {"config", {{"grid", {{"k", {"f16", "q8_0", "q4_0"}}, {"v", {"f16", "q8_0", "q4_0"}}, {"reference", "f16/f16"}}}}}};
  std::vector<json> records;
  for (int i = 0; i < 60; ++i)
    for (const char* t : {"f16", "q8_0", "q4_0"}) records.push_back(record(t, t, i));
  auto data = RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data.has_value());
  return std::move(*data);
}

TEST(CostMemory, KvScalesToTheContextModelAndComputeDoNot) {
  const RunData data = gpu_run();
  const CostTable costs = cell_costs(data, 8192);
  const auto index = *data.find_cell("m", "q8_0", "q8_0");
  const auto memory = memory_at(data.cells()[index], *costs.find(index), costs.context);
  ASSERT_EQ(memory.size(), 3u);
  EXPECT_DOUBLE_EQ(memory[0].kv_mib, 425.0);
  EXPECT_DOUBLE_EQ(memory[0].model_mib, 100.0);
  EXPECT_DOUBLE_EQ(memory[0].compute_mib, 300.0);
  const MemoryNeed need = memory_need(memory);
  EXPECT_TRUE(need.per_device);
  EXPECT_EQ(need.where, "CUDA0");
  EXPECT_DOUBLE_EQ(need.mib, 825.0) << "the GPU device only: host buffers do not count";
  EXPECT_EQ(memory_text(need, memory), "CUDA0 825.0 MiB (model 100.0 + KV 425.0 + compute 300.0)");
}

TEST(CostMemory, WithoutGpuBuffersEveryBufferCounts) {
  const std::vector<DeviceBuffers> cpu = {{"CPU_Mapped", false, 50, 0, 0}, {"CPU", false, 0, 16, 20}};
  const MemoryNeed need = memory_need(cpu);
  EXPECT_FALSE(need.per_device);
  EXPECT_DOUBLE_EQ(need.mib, 86.0);
  EXPECT_TRUE(std::isnan(memory_need({}).mib));
}

TEST(CostMemory, ConvertedPairIsRecommendedOnlyWithItsWarning) {
  const RunData data = gpu_run();
  const Recommendation rec = recommend(data);
  ASSERT_EQ(rec.models.size(), 1u);
  ASSERT_TRUE(rec.models[0].recommended);
  EXPECT_EQ(data.cells()[*rec.models[0].recommended].types(), "q4_0/q4_0");
  const std::string md = recommend_markdown(data, rec);
  EXPECT_THAT(md, HasSubstr("Path: converted — **warning**: no kernel; remedy: add q4_0-q4_0")) << md;
  EXPECT_THAT(md, HasSubstr("Memory at 4096 tokens: CUDA0 1112.5 MiB")) << md;
  const std::string cost = cost_markdown(data, rec.costs);
  EXPECT_THAT(cost, HasSubstr("### Attention path and memory"));
  EXPECT_THAT(cost, HasSubstr("| m q4_0/q4_0 | converted | CUDA0 | 100.0 | 112.5 | 900.0 | 1112.5 |")) << cost;
  EXPECT_THAT(cost, HasSubstr("- m q4_0/q4_0: converted — no kernel; remedy")) << cost;
}

TEST(CostMemory, VramLeavesOutWhatDoesNotFitAndSaysWhy) {
  const RunData data = gpu_run();
  RecommendOptions options;
  options.vram_gib = 1.0;  // 1024 MiB: q8_0/q8_0 needs 612.5 on CUDA0, q4_0/q4_0 1112.5
  const Recommendation rec = recommend(data, options);
  ASSERT_TRUE(rec.models[0].recommended);
  EXPECT_EQ(data.cells()[*rec.models[0].recommended].types(), "q8_0/q8_0");
  ASSERT_EQ(rec.models[0].over_vram.size(), 1u);
  EXPECT_EQ(data.cells()[rec.models[0].over_vram[0].first].types(), "q4_0/q4_0");
  const std::string md = recommend_markdown(data, rec);
  EXPECT_THAT(md,
              HasSubstr("Path: vec. Memory at 4096 tokens: CUDA0 612.5 MiB (model 100.0 + KV 212.5 + compute 300.0), "
                        "fits --vram 1 GiB on every GPU device."))
      << md;
  EXPECT_THAT(md, HasSubstr("Left out by --vram 1 GiB (non-inferior, but too large): q4_0/q4_0 needs CUDA0 1112.5 MiB"))
      << md;
  const auto j = recommend_json(data, rec);
  EXPECT_EQ(j.at("vram_gib"), 1.0);
  EXPECT_EQ(j.at("models")[0].at("over_vram")[0].at("id"), "m-q4_0-q4_0");
  // Too little for any: the reference stays, and the line says it is --vram that decided.
  options.vram_gib = 0.25;
  const Recommendation none = recommend(data, options);
  EXPECT_FALSE(none.models[0].recommended);
  EXPECT_THAT(recommend_markdown(data, none), HasSubstr("No cell that fits --vram"));
}

TEST(CostMemory, PathColumnsAppearWhenTheManifestRecordedPaths) {
  const RunData data = gpu_run();
  const std::string csv = write_long_csv(data);
  EXPECT_THAT(csv, HasSubstr(",kv_bytes_per_token,path,time,")) << csv.substr(0, 300);
  EXPECT_THAT(csv, HasSubstr(",converted,"));
  const Table t = outcome_table(data, summarize_run(data));
  ASSERT_EQ(t.header.size(), t.rows.at(0).size());
  const auto column = std::find(t.header.begin(), t.header.end(), "path") - t.header.begin();
  ASSERT_LT(column, static_cast<long>(t.header.size()));
  bool converted_with_remedy = false;
  for (const auto& row : t.rows)
    converted_with_remedy = converted_with_remedy ||
                            (row[column] == "converted" && row.back().find("remedy: add q4_0-q4_0") != std::string::npos);
  EXPECT_TRUE(converted_with_remedy);
  const auto j = cost_json(data, cell_costs(data));
  EXPECT_EQ(j.at("cells")[0].at("path"), "vec");
  EXPECT_EQ(j.at("cells")[0].at("memory")[0].at("total_mib"), 800.0);
}

}  // namespace
}  // namespace kvsweep::report
