// parse_effective_kv against log lines of the pinned llama-server (de3ff81), copied from its output.
#include <gtest/gtest.h>

#include "kvsweep/server/backend.hpp"

namespace kvsweep::server {
namespace {

TEST(EffectiveKv, ReadsTypesSizesFlashAttentionAndRotation) {
  const std::string log =
      "llama_context: flash_attn    = enabled\n"
      "llama_kv_cache:        CPU KV buffer size =     2.56 MiB\n"
      "llama_kv_cache: size =    2.56 MiB (  4096 cells,   2 layers,  1/1 seqs), K (q4_0):    0.56 MiB, V (f16):"
      "    2.00 MiB\n"
      "llama_kv_cache: attn_rot_k = 1, n_embd_head_k_all = 512\n"
      "llama_kv_cache: attn_rot_v = 0, n_embd_head_k_all = 512\n";
  const EffectiveKv e = parse_effective_kv(log);
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.type_k, "q4_0");
  EXPECT_EQ(e.type_v, "f16");
  EXPECT_DOUBLE_EQ(e.k_mib, 0.56);
  EXPECT_DOUBLE_EQ(e.total_mib, 2.56);
  EXPECT_EQ(e.flash_attn, "enabled");
  EXPECT_EQ(e.attn_rot_k, 1);
  EXPECT_EQ(e.attn_rot_v, 0);
  const auto j = to_json(e);
  EXPECT_EQ(j.at("attn_rot_k"), 1);
  EXPECT_EQ(j.at("attn_rot_v"), 0);
}

TEST(EffectiveKv, RotationUnknownWhenTheLogDoesNotSay) {
  const EffectiveKv e = parse_effective_kv(
      "llama_kv_cache: size =   16.00 MiB (  4096 cells,   2 layers,  1/1 seqs), K (f16):    8.00 MiB, V (f16):"
      "    8.00 MiB\n");
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.attn_rot_k, -1);
  EXPECT_EQ(e.attn_rot_v, -1);
  EXPECT_FALSE(to_json(e).contains("attn_rot_k"));
}

TEST(EffectiveKv, RotationDisabledByEnvironmentReadsAsZero) {
  const EffectiveKv e = parse_effective_kv(
      "llama_kv_cache: attention rotation force disabled (LLAMA_ATTN_ROT_DISABLE)\n"
      "llama_kv_cache: attn_rot_k = 0, n_embd_head_k_all = 512\n"
      "llama_kv_cache: attn_rot_v = 0, n_embd_head_k_all = 512\n");
  EXPECT_EQ(e.attn_rot_k, 0);
  EXPECT_EQ(e.attn_rot_v, 0);
}

TEST(EffectiveKv, ReadsTheContextTheServerAllocated) {
  const EffectiveKv e = parse_effective_kv(
      "llama_context: n_seq_max             = 1\n"
      "llama_context: n_ctx                 = 6144\n"
      "llama_context: n_ctx_seq             = 4096\n"
      "llama_context: n_ctx_seq (6144) < n_ctx_train (131072) -- the full capacity of the model will not be utilized\n");
  EXPECT_EQ(e.n_ctx, 6144);
  EXPECT_EQ(to_json(e).at("n_ctx"), 6144);
  EXPECT_FALSE(to_json(parse_effective_kv("")).contains("n_ctx"));
}

// check_settings: what the cell asked beyond K/V (a variant's context, -fa, rotation off) against the log.
TEST(CheckSettings, AgreementOrSilenceIsNoMismatch) {
  CellSpec spec;
  spec.n_ctx = 6144;
  spec.extra_args = {"-fa", "on"};
  spec.env = {{"LLAMA_ATTN_ROT_DISABLE", "1"}};
  EffectiveKv e;
  EXPECT_EQ(check_settings(e, spec), "") << "a log that says nothing contradicts nothing";
  e.n_ctx = 6144;
  e.flash_attn = "enabled";
  e.attn_rot_k = e.attn_rot_v = 0;
  EXPECT_EQ(check_settings(e, spec), "");
  // "0" asks for nothing: whether the server rotates depends on the head size and the cache type.
  spec.env = {{"LLAMA_ATTN_ROT_DISABLE", "0"}};
  e.attn_rot_k = 1;
  EXPECT_EQ(check_settings(e, spec), "");
}

TEST(CheckSettings, EachIgnoredSettingIsNamed) {
  CellSpec spec;
  spec.n_ctx = 32768;
  spec.extra_args = {"-fa", "on", "-t", "1", "-fa", "off"};  // the last one counts, as in llama-server
  spec.env = {{"LLAMA_ATTN_ROT_DISABLE", "0"}, {"LLAMA_ATTN_ROT_DISABLE", "1"}};
  EffectiveKv e;
  e.n_ctx = 8192;
  e.flash_attn = "enabled";
  e.attn_rot_k = 1;
  e.attn_rot_v = 0;
  EXPECT_EQ(check_settings(e, spec),
            "requested a context of 32768 tokens, the server allocated 8192 (a server may cap it at the model's "
            "training context, as Ollama does: set server.ctx to at most that); "
            "requested flash attention off (-fa off), the server ran it enabled; "
            "requested no attention rotation (LLAMA_ATTN_ROT_DISABLE=1), the server rotated K");
}

TEST(CheckSettings, AContextThatIsACeilingMayBeSmallerButNotLarger) {
  CellSpec spec;
  spec.n_ctx = 8192;
  spec.n_ctx_at_most = true;  // the embedder's
  EffectiveKv e;
  e.n_ctx = 512;
  EXPECT_EQ(check_settings(e, spec), "");
  e.n_ctx = 16384;
  EXPECT_EQ(check_settings(e, spec), "requested a context of 8192 tokens, the server allocated 16384");
}

// SmolLM2 (trained to 8K) asked for 131K on an H200: the lines of that llama-server's log (de3ff81).
TEST(CheckSettings, ASlotCappedAtTheTrainingContextNamesTheCapAndTheOverride) {
  const EffectiveKv e = parse_effective_kv(
      "0.00.340.897 I llama_model_loader: - kv   0:                       general.architecture str              = llama\n"
      "0.00.436.074 I llama_context: n_ctx                 = 131328\n"
      "0.00.436.084 W llama_context: n_ctx_seq (131328) > n_ctx_train (8192) -- possible training context overflow\n"
      "0.00.536.891 W srv    load_model: the slot context (131328) exceeds the training context of the model (8192) - "
      "capping\n"
      "0.00.546.766 I srv    load_model: initializing, n_slots = 1, n_ctx_slot = 8192, kv_unified = 'false'\n");
  EXPECT_EQ(e.n_ctx, 131328);
  EXPECT_EQ(e.slot_cap, 8192);
  EXPECT_EQ(e.architecture, "llama");
  EXPECT_EQ(to_json(e).at("slot_cap"), 8192);
  CellSpec spec;
  spec.n_ctx = 131328;
  EXPECT_EQ(check_settings(e, spec),
            "requested a context of 131328 tokens, llama-server gives each slot at most the model's training "
            "context, 8192 tokens (set server.ctx to at most that, or add \"--override-kv\", "
            "\"llama.context_length=int:131328\" to server.args to run the model past its training)");
  spec.n_ctx_at_most = true;  // the embedder's ceiling: a smaller slot is what it asked for
  EXPECT_EQ(check_settings(e, spec), "");
  // With the override the server logs no cap: nothing to say.
  EXPECT_EQ(parse_effective_kv("llama_context: n_ctx = 131328\n").slot_cap, 0);
  EXPECT_FALSE(to_json(parse_effective_kv("")).contains("slot_cap"));
}

}  // namespace
}  // namespace kvsweep::server
