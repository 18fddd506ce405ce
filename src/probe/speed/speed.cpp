#include "kvsweep/probe/speed/speed.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <unistd.h>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/probe/tool_args.hpp"
#include "kvsweep/probe/token_list.hpp"
#include "kvsweep/probe/tool_text.hpp"
#include "kvsweep/process/child.hpp"

namespace kvsweep::probe {

namespace {

using nlohmann::json;

struct SpeedConfig {
  std::string name = "speed";
  std::vector<int> depths = {0};
  int pp = 512;
  int tg = 128;
  int repetitions = 3;
  std::string binary = "llama-bench";
  std::vector<std::string> args;
  int timeout_s = 3600;
};

class SpeedProbe final : public Probe {
 public:
  SpeedProbe(SpeedConfig config, std::shared_ptr<process::ToolRunner> runner, bool host_amx)
      : m_config(std::move(config)), m_runner(std::move(runner)), m_host_amx(host_amx) {}

  std::string kind() const override { return "speed"; }
  std::string name() const override { return m_config.name; }
  bool runs_tool() const override { return true; }
  /// llama.cpp's own tool on the model file, beside the cell's llama-server.
  std::vector<server::Need> needs() const override { return {{server::Capability::llama_cpp_tools, ""}}; }
  bool deterministic() const override { return false; }  // a speed, measured

  std::vector<Item> items() const override {
    std::vector<Item> out;
    for (int d : m_config.depths) {
      out.push_back({"d" + std::to_string(d), to_json(SpeedSpec{.depth = d, .pp = m_config.pp, .tg = m_config.tg,
                                                                .repetitions = m_config.repetitions})});
    }
    return out;
  }

  std::vector<MetricSpec> metrics() const override {
    std::vector<MetricSpec> out;
    if (m_config.pp > 0) {
      out.push_back(cost("pp_tok_s", Direction::higher_better));
      out.push_back(diagnostic("pp_tok_s_sd", MetricKind::continuous));
    }
    if (m_config.tg > 0) {
      out.push_back(cost("tg_tok_s", Direction::higher_better));
      out.push_back(diagnostic("tg_tok_s_sd", MetricKind::continuous));
    }
    return out;
  }

  core::Expected<ItemResult> run(const Item& item, Context& ctx) override {
    const CellInfo& cell = ctx.cell;
    const int depth = SpeedSpec::from_json(item.spec).value_or(SpeedSpec{}).depth;
    auto binary = resolve_binary(cell);
    if (!binary) return std::unexpected(binary.error());
    const std::filesystem::path dir = cell.run_dir / "speed";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return core::fail(core::ErrorKind::io, "cannot create " + dir.string() + ": " + ec.message());
    const std::string suffix = m_config.name == "speed" ? "" : "-" + safe_name(m_config.name);
    const std::filesystem::path log = dir / (cell.id() + "-d" + std::to_string(depth) + suffix + ".log");

    std::vector<std::string> argv = {*binary, "-m", cell.model_path, "-ctk", cell.type_k, "-ctv", cell.type_v,
                                     "-p", std::to_string(m_config.pp), "-n", std::to_string(m_config.tg),
                                     "-d", std::to_string(depth), "-r", std::to_string(m_config.repetitions),
                                     "-o", "jsonl"};
    for (const auto& a : bench_args(cell.server_args)) argv.push_back(a);
    argv.insert(argv.end(), m_config.args.begin(), m_config.args.end());

    auto ran = m_runner->run(argv, cell.env, log, std::chrono::seconds(m_config.timeout_s));
    if (!ran) return std::unexpected(ran.error());
    if (ran->status.signaled || ran->status.code != 0) {
      std::string known;
      if (auto crash = process::known_crash(process::LlamaProgram::bench, ran->output, ran->status.signaled, m_host_amx))
        known = " — " + *crash;
      return core::fail(core::ErrorKind::process, "llama-bench " + ran->status.describe() + known + " (" +
                                                      command_line(argv) + "); last lines:" + output_tail(ran->output));
    }
    auto tests = parse_bench_output(ran->output);
    if (!tests) return std::unexpected(tests.error());

    ItemResult out;
    out.response = {{"command", command_line(argv)}, {"log", log.string()}, {"tests", json::array()}};
    bool have_pp = false, have_tg = false;
    for (const auto& t : *tests) {
      // llama-bench names the types it ran; a build that ignored ours must not pass for the cell.
      if ((!t.type_k.empty() && t.type_k != cell.type_k) || (!t.type_v.empty() && t.type_v != cell.type_v))
        return core::fail(core::ErrorKind::invalid, "llama-bench ran type_k " + t.type_k + ", type_v " + t.type_v +
                                                        ", not the cell's " + cell.types() + " (" +
                                                        command_line(argv) + ")");
      out.response["tests"].push_back(t.raw);
      if (t.n_depth != depth) continue;
      if (t.n_prompt > 0 && t.n_gen == 0) {
        out.metrics["pp_tok_s"] = t.avg_ts;
        out.metrics["pp_tok_s_sd"] = t.stddev_ts;
        have_pp = true;
      } else if (t.n_gen > 0 && t.n_prompt == 0) {
        out.metrics["tg_tok_s"] = t.avg_ts;
        out.metrics["tg_tok_s_sd"] = t.stddev_ts;
        have_tg = true;
      }
    }
    if ((m_config.pp > 0 && !have_pp) || (m_config.tg > 0 && !have_tg))
      return core::fail(core::ErrorKind::parse, std::string("llama-bench printed no ") + (have_pp ? "tg" : "pp") +
                                                    " test at depth " + std::to_string(depth) + "; last lines:" +
                                                    output_tail(ran->output));
    return out;
  }

 private:
  /// A path as given; else the tool beside the cell's llama-server (the same build); else
  /// $KVSWEEP_LLAMA_BIN/<name> or PATH.
  core::Expected<std::string> resolve_binary(const CellInfo& cell) const {
    if (m_config.binary.find('/') == std::string::npos && !cell.server_binary.empty()) {
      const auto beside = std::filesystem::path(cell.server_binary).parent_path() / m_config.binary;
      if (::access(beside.c_str(), X_OK) == 0) return beside.string();
    }
    std::string found = process::find_llama_tool(m_config.binary);
    if (found.empty())
      return core::fail(core::ErrorKind::process,
                        "'" + m_config.binary + "' not found beside " +
                            (cell.server_binary.empty() ? std::string("the server") : cell.server_binary) +
                            ": set the probe's \"binary\", build it (scripts/llama-cpp builds llama-bench), or set "
                            "KVSWEEP_LLAMA_BIN=$(scripts/llama-cpp)");
    return found;
  }

  SpeedConfig m_config;
  std::shared_ptr<process::ToolRunner> m_runner;
  bool m_host_amx;
};

std::vector<int> get_depths(const json& cfg, const config::Site& s) {
  return get_token_list(cfg, s, {"depths", "depths", "[0, 32768]", {0}, 0});
}

}  // namespace

std::optional<SpeedSpec> SpeedSpec::from_json(const json& j) {
  if (!j.is_object() || !j.contains("depth") || !j["depth"].is_number_integer()) return std::nullopt;
  const auto integer = [&j](const char* key) {
    const auto v = j.find(key);
    return v != j.end() && v->is_number_integer() ? v->get<int>() : 0;
  };
  return SpeedSpec{.depth = integer("depth"), .pp = integer("pp"), .tg = integer("tg"),
                   .repetitions = integer("repetitions")};
}

json to_json(const SpeedSpec& spec) {
  return {{"depth", spec.depth}, {"pp", spec.pp}, {"tg", spec.tg}, {"repetitions", spec.repetitions}};
}

std::unique_ptr<Probe> make_speed_probe(const json& cfg, const ConfigSource& site) {
  return make_speed_probe_with(cfg, site, process::process_tool_runner());
}

std::unique_ptr<Probe> make_speed_probe_with(const json& cfg, const ConfigSource& site,
                                             std::shared_ptr<process::ToolRunner> runner, bool host_amx) {
  const config::Site& s = site.site;
  config::check_keys(cfg, {"kind", "name", "depths", "pp", "tg", "repetitions", "binary", "args", "timeout_s"}, s);
  SpeedConfig c;
  c.name = config::get_string(cfg, "name", "speed", s);
  c.depths = get_depths(cfg, s);
  c.pp = static_cast<int>(config::get_int_in(cfg, "pp", 512, 0, 1 << 20, s));
  c.tg = static_cast<int>(config::get_int_in(cfg, "tg", 128, 0, 1 << 20, s));
  if (c.pp == 0 && c.tg == 0) s.child("tg").fail("pp and tg are both 0: nothing to measure");
  c.repetitions = static_cast<int>(config::get_int_in(cfg, "repetitions", 3, 1, 1000, s));
  c.binary = config::get_string(cfg, "binary", "llama-bench", s);
  if (c.binary.empty()) s.child("binary").fail("must not be empty");
  c.args = config::get_strings(cfg, "args", {}, s);
  c.timeout_s = static_cast<int>(config::get_int_in(cfg, "timeout_s", 3600, 1, 1 << 30, s));
  return std::make_unique<SpeedProbe>(std::move(c), std::move(runner), host_amx);
}

}  // namespace kvsweep::probe
