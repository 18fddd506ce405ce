#include "kvsweep/core/host.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <thread>

namespace kvsweep::core {

nlohmann::json host_info() {
  nlohmann::json j;
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  j["hostname"] = name;
  j["cores"] = std::thread::hardware_concurrency();
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpu, line)) {
    if (line.rfind("model name", 0) == 0) {
      j["cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::ifstream mem("/proc/meminfo");
  while (std::getline(mem, line)) {
    if (line.rfind("MemTotal:", 0) == 0) {
      j["mem_gib"] = std::stod(line.substr(9)) / (1024.0 * 1024.0);
      break;
    }
  }
  nlohmann::json gpus = nlohmann::json::array();
  std::error_code ec;
  if (std::filesystem::exists("/proc/driver/nvidia/gpus", ec)) {
    for (const auto& d : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
      std::ifstream info(d.path() / "information");
      while (std::getline(info, line))
        if (line.rfind("Model:", 0) == 0) gpus.push_back(line.substr(line.find_first_not_of(" \t", 6)));
    }
  }
  j["gpus"] = gpus;
  return j;
}

namespace {

std::string hex_digest(EVP_MD_CTX* ctx) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

using DigestCtx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestCtx sha256_context() {
  DigestCtx ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  return ctx;
}

}  // namespace

Expected<std::string> sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorKind::io, "cannot read " + path.string());
  DigestCtx ctx = sha256_context();
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  return hex_digest(ctx.get());
}

std::string sha256_hex(std::string_view bytes) {
  DigestCtx ctx = sha256_context();
  EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  return hex_digest(ctx.get());
}

}  // namespace kvsweep::core
