#pragma once
/// The context block every report output opens with: which run, which kvsweep and server built it,
/// which model (by sha256), which host — taken from the run's manifest — and which kvsweep wrote the report.

#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/report/input/run_data.hpp"

namespace kvsweep::report {

inline constexpr int kReportSchemaVersion = 1;

/// The kvsweep that writes a report (tests pass a fixed one so golden files do not change per commit).
struct Generator {
  std::string version;
  std::string git_sha;
};

/// This build's version and git sha (core/version.hpp).
Generator this_build();

/// {"run":{name,config_hash,status,started_at,finished_at}, "kvsweep":{version,git_sha}, "server":{…},
///  "models":[{name,path,size,sha256}], "host":{…}, "report":{"kvsweep":{version,git_sha}}}.
nlohmann::json context_block(const RunData& data, const Generator& generator);

/// One line for Markdown/HTML: "kvsweep 0.1.0 (a26fecac9b7e) · llama-server 0.5.0-dev … · tiny sha256 1996269170e4 · host vm (…)".
std::string context_line(const RunData& data);

}  // namespace kvsweep::report
