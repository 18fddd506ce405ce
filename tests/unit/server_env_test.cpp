// The variables a server reads, and which of kvsweep's own environment it inherits:
// what the manifest records as `server_env`.
#include <gtest/gtest.h>

#include "kvsweep/server/server_env.hpp"

namespace server = kvsweep::server;

namespace {

using Env = server::EnvList;

TEST(ServerEnv, LlamaGgmlOllamaAndDeviceSelectionAreRead) {
  for (const char* name : {"LLAMA_ATTN_ROT_DISABLE", "LLAMA_ARG_FLASH_ATTN", "GGML_VK_VISIBLE_DEVICES",
                           "GGML_CUDA_FORCE_MMQ", "OLLAMA_KEEP_ALIVE", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                           "ROCR_VISIBLE_DEVICES", "ONEAPI_DEVICE_SELECTOR"})
    EXPECT_TRUE(server::is_server_env_name(name)) << name;
  for (const char* name : {"PATH", "HOME", "LLAMA", "CUDA_HOME", "KVSWEEP_LLAMA_BIN", "llama_attn_rot_disable"})
    EXPECT_FALSE(server::is_server_env_name(name)) << name;
}

TEST(ServerEnv, InheritedKeepsWhatTheServerReadsSortedAndOllamaDropsItsOwn) {
  const char* envp[] = {"PATH=/usr/bin",      "LLAMA_ATTN_ROT_DISABLE=1", "CUDA_VISIBLE_DEVICES=0,1",
                        "OLLAMA_KEEP_ALIVE=5m", "LLAMA_ARG_CTX_SIZE=8192", "GGML_X=a=b", "NOEQUALS", nullptr};
  EXPECT_EQ(server::inherited_server_env(envp, "llama-server"),
            (Env{{"CUDA_VISIBLE_DEVICES", "0,1"}, {"GGML_X", "a=b"}, {"LLAMA_ARG_CTX_SIZE", "8192"},
                 {"LLAMA_ATTN_ROT_DISABLE", "1"}, {"OLLAMA_KEEP_ALIVE", "5m"}}));
  // Ollama's launch removes inherited OLLAMA_* and LLAMA_ARG_* (ollama_launch_env): they never reach it.
  EXPECT_EQ(server::inherited_server_env(envp, "ollama"),
            (Env{{"CUDA_VISIBLE_DEVICES", "0,1"}, {"GGML_X", "a=b"}, {"LLAMA_ATTN_ROT_DISABLE", "1"}}));
  EXPECT_TRUE(server::inherited_server_env(envp, "external").empty());
  EXPECT_TRUE(server::inherited_server_env(nullptr, "llama-server").empty());
}

TEST(ServerEnv, TheConfigsValueWinsAsTheLaunchSetsIt) {
  EXPECT_EQ(server::launched_server_env({{"CUDA_VISIBLE_DEVICES", "0"}, {"LLAMA_ATTN_ROT_DISABLE", "1"}},
                                        {{"LLAMA_ATTN_ROT_DISABLE", "0"}, {"GGML_A", "x"}, {"GGML_A", "y"}}),
            (Env{{"CUDA_VISIBLE_DEVICES", "0"}, {"GGML_A", "y"}, {"LLAMA_ATTN_ROT_DISABLE", "0"}}));
}

}  // namespace
