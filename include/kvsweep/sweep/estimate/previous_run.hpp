#pragma once
/// The previous run the dry run estimates its time from: the run directory under the config's
/// output_dir that finished last and ran the same model file.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/sweep/estimate/time_estimate.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::sweep {

/// The name a run's manifest gives the model at `path` ("models": name, path, size), "" when it has
/// none. A recorded size must equal `size` when both are known (the same path holding another file
/// is another model); the sha256 is not compared, since hashing a large model would slow the dry run.
std::string model_name_in(const Manifest& manifest, const std::string& path, std::optional<std::uintmax_t> size);
/// The same from a manifest's JSON.
std::string model_name_in(const nlohmann::json& manifest, const std::string& path, std::optional<std::uintmax_t> size);

/// The rates of the run directly under `runs_dir` whose manifest says "complete", names the model
/// at `model_path` and finished last (its finished_at); nullopt when there is none (or no such directory).
std::optional<RunRates> previous_rates(const std::filesystem::path& runs_dir, const std::string& model_path);

}  // namespace kvsweep::sweep
