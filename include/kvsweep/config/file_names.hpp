#pragma once
/// The check that distinct models, variants and cells of a config get distinct file names: server
/// logs, kld base logits and figures are named by `core::file_safe`, which folds every character
/// but letters, digits, '.', '_' and '-' to '_', so "m a" and "m_a" would share their files.

#include "kvsweep/config/config.hpp"
#include "kvsweep/config/keys.hpp"

namespace kvsweep::config {

/// The longest model, variant or run name: two of them and a cell's types make one file name,
/// which may be 255 bytes.
inline constexpr std::size_t kMaxNameBytes = 100;

/// Throws core::FatalError at `site` for an empty name or one longer than kMaxNameBytes.
void check_name_length(const std::string& name, const Site& site);
/// As check_name_length, and the run's name must not hold '/' or start with '.': it names the run
/// directory under output_dir.
void check_run_name(const std::string& name, const Site& site);

/// Throws core::FatalError at the later of two models (or variants) whose names, or whose cells'
/// (model, variant) part, map to one file name, naming both and the file name they share.
void check_file_names(const Config& config, const Site& root);

}  // namespace kvsweep::config
