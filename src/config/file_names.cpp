#include "kvsweep/config/file_names.hpp"

#include <map>
#include <string>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/core/file_name.hpp"

namespace kvsweep::config {

namespace {

/// File names already given out, each with who holds it; a second holder fails at its site.
class FileNames {
 public:
  explicit FileNames(std::string files) : m_files(std::move(files)) {}
  void claim(const std::string& file_name, const std::string& who, const Site& site) {
    const auto [it, fresh] = m_holders.emplace(file_name, who);
    if (fresh || it->second == who) return;
    site.fail(who + " and " + it->second + " share the file name \"" + file_name + "\" (" + m_files +
              " are named by it), so one would overwrite the other's; give them names that differ in a letter, "
              "digit, '.', '_' or '-' (other characters become '_')");
  }

 private:
  std::string m_files;
  std::map<std::string, std::string> m_holders;
};

std::string model_who(const Config& c, std::size_t i) {
  return "model '" + c.models[i].name + "' (models[" + std::to_string(i) + "])";
}

std::string group_who(const Config& c, std::size_t i, std::size_t j) {
  return model_who(c, i) + " with variant '" + c.variants[j].name + "'";
}

}  // namespace

void check_name_length(const std::string& name, const Site& site) {
  if (name.empty()) site.fail("empty: a name is part of file names, give one");
  if (name.size() > kMaxNameBytes)
    site.fail("is " + std::to_string(name.size()) + " bytes long; names become parts of file names (a cell's log is "
              "<model>-<variant>-K-V.log, at most 255 bytes), so keep it to " + std::to_string(kMaxNameBytes) +
              " bytes");
}

void check_run_name(const std::string& name, const Site& site) {
  check_name_length(name, site);
  // The run directory is <output_dir>/<name>-<time>: a '/' or a leading '.' would put it elsewhere.
  if (name.find('/') != std::string::npos || name.find('\0') != std::string::npos || name.front() == '.')
    site.fail("\"" + name + "\" names the run directory (<output_dir>/<name>-<time>), so it cannot hold '/' or start "
              "with '.' (it would leave output_dir); use letters, digits, '.', '_' and '-'");
}

void check_file_names(const Config& c, const Site& root) {
  FileNames models("server logs, kld base logits and figures");
  for (std::size_t i = 0; i < c.models.size(); ++i) {
    check_name_length(c.models[i].name, root.child("models").index(i).child("name"));
    models.claim(core::file_safe(c.models[i].name), model_who(c, i), root.child("models").index(i).child("name"));
  }
  for (std::size_t j = 0; j < c.variants.size(); ++j)
    check_name_length(c.variants[j].name, root.child("variants").index(j).child("name"));
  FileNames variants("server logs and kld base logits");
  for (std::size_t j = 0; j < c.variants.size(); ++j)
    variants.claim(core::file_safe(c.variants[j].name), "variant '" + c.variants[j].name + "'",
                   root.child("variants").index(j).child("name"));
  // Distinct models and variants can still meet in a cell's id, "<model>-<variant>-K-V" ("m" with
  // "a-b" and "m-a" with "b"), or in its grid's figures, "<model>_<variant>". The types hold no '-',
  // so two cells of one K/V share an id exactly when any two of their K/V do: the reference stands in.
  FileNames cells("server logs and kld base logits");
  FileNames grids("figures");
  for (std::size_t i = 0; i < c.models.size(); ++i) {
    for (std::size_t j = 0; j < c.variants.size(); ++j) {
      const Site site = root.child("models").index(i).child("name");
      const core::CellKey key{c.models[i].name, c.variants[j].name, c.grid.reference.type_k, c.grid.reference.type_v};
      cells.claim(key.id(), group_who(c, i, j), site);
      grids.claim(core::file_safe(key.group()), group_who(c, i, j), site);
    }
  }
}

}  // namespace kvsweep::config
