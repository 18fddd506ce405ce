#pragma once
/// The check that distinct models, variants and cells of a config get distinct file names: server
/// logs, kld base logits and figures are named by `core::file_safe`, which folds every character
/// but letters, digits, '.', '_' and '-' to '_', so "m a" and "m_a" would share their files.

#include "kvsweep/config/config.hpp"
#include "kvsweep/config/keys.hpp"

namespace kvsweep::config {

/// Throws core::FatalError at the later of two models (or variants) whose names, or whose cells'
/// (model, variant) part, map to one file name, naming both and the file name they share.
void check_file_names(const Config& config, const Site& root);

}  // namespace kvsweep::config
