// server/attach_verify: what an attached llama-server says of itself (/props) and its own log file,
// checked against the cell. Pure functions on captured texts.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/server/lifecycle/attach_verify.hpp"

using namespace kvsweep::server;

namespace {

CellSpec spec_for(const std::string& model_path, int n_ctx) {
  CellSpec spec;
  spec.model_path = model_path;
  spec.n_ctx = n_ctx;
  return spec;
}

const char* kLog =
    "0.00.001 I srv  llama_server: initializing ...\n"
    "llama_context: n_ctx                 = 4096\n"
    "llama_kv_cache: size =   16.00 MiB (  4096 cells,   2 layers,  1/1 seqs), K (f16):    8.00 MiB, V (f16):    8.00 MiB\n"
    "srv  llama_server: listening on http://127.0.0.1:8080\n"
    "0.00.001 I srv  llama_server: initializing ...\n"
    "llama_context: n_ctx                 = 4096\n"
    "llama_kv_cache: size =    8.50 MiB (  4096 cells,   2 layers,  1/1 seqs), K (q8_0):    4.25 MiB, V (q8_0):    4.25 MiB\n"
    "srv  llama_server: listening on http://127.0.0.1:8080\n";

}  // namespace

TEST(AttachVerify, PropsAreReadLenientlyAndAFieldOfAnotherTypeIsLeftEmpty) {
  const auto p = read_props(nlohmann::json::parse(
      R"({"model_path":"/m/smollm2.gguf","model_ftype":"Q8_0","build_info":"b1-de3ff81",
          "default_generation_settings":{"n_ctx":4096},"total_slots":"1"})"));
  EXPECT_EQ(p.model_path, "/m/smollm2.gguf");
  EXPECT_EQ(p.model_ftype, "Q8_0");
  EXPECT_EQ(p.n_ctx, 4096);
  EXPECT_EQ(p.total_slots, 0);  // a string is not a count
}

TEST(AttachVerify, AServerOfAnotherModelOrASmallerContextIsNotTheCells) {
  AttachedProps p;
  p.model_path = "/elsewhere/qwen3-0.6b.gguf";
  p.n_ctx = 4096;
  EXPECT_NE(props_mismatch(p, spec_for("/models/smollm2.gguf", 4096)).find("it serves '/elsewhere/qwen3-0.6b.gguf'"),
            std::string::npos);
  p.model_path = "/elsewhere/smollm2.gguf";  // another machine's path: the name is what can be compared
  EXPECT_EQ(props_mismatch(p, spec_for("/models/smollm2.gguf", 4096)), "");
  EXPECT_NE(props_mismatch(p, spec_for("/models/smollm2.gguf", 8192)).find("slot context is 4096"), std::string::npos);
  p.model_path.clear();
  EXPECT_NE(props_mismatch(p, spec_for("/models/smollm2.gguf", 4096)).find("names no model_path"), std::string::npos);
}

TEST(AttachVerify, TheTypesComeFromTheLastStartOfTheLog) {
  AttachedProps p;
  p.n_ctx = 4096;
  auto e = effective_from_log(kLog, "server.log", "http://127.0.0.1:8080", p);
  ASSERT_TRUE(e) << e.error();
  EXPECT_EQ(e->type_k, "q8_0");  // the server restarted with q8_0: the first start's f16 is history
  EXPECT_EQ(e->type_v, "q8_0");
  EXPECT_DOUBLE_EQ(e->k_mib, 4.25);
  EXPECT_FALSE(e->declared);
}

TEST(AttachVerify, ALogOfAnotherPortOrWithoutTheKvLineCannotVouchForTheServer) {
  AttachedProps p;
  auto other = effective_from_log(kLog, "server.log", "http://127.0.0.1:9090", p);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().find("does not say it listens on port 9090"), std::string::npos) << other.error();
  auto bare = effective_from_log("srv  llama_server: listening on http://127.0.0.1:8080\n", "server.log",
                                 "http://127.0.0.1:8080/", p);
  ASSERT_FALSE(bare);
  EXPECT_NE(bare.error().find("no llama_kv_cache line"), std::string::npos) << bare.error();
  p.n_ctx = 8192;  // /props says 8192: the log's last start (4096) is of another start
  auto stale = effective_from_log(kLog, "server.log", "http://127.0.0.1:8080", p);
  ASSERT_FALSE(stale);
  EXPECT_NE(stale.error().find("of another start"), std::string::npos) << stale.error();
}
