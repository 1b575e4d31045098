#pragma once
// Checks `ferry run` makes before the command starts, so GPUs never spin up for a job whose
// results could not be saved: every input URL can be listed and read, every output URL can be
// written, read back and deleted (a probe object under _ferry/), the credentials each s3://
// URL resolves to are named (source and identity, never the secret), local stage-in targets have
// room for the inputs, and each local output directory is classified (ferry doctor). Problems
// are errors; doubtful storage is a warning, an error under --strict.

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "storage/registry.h"

namespace ferry::job {

struct PreflightReport {
  std::vector<std::string> lines;  // what was checked, one line each
  std::vector<std::string> warnings;
  std::vector<std::string> errors;
  bool ok(bool strict) const { return errors.empty() && (!strict || warnings.empty()); }
};

// The credentials of stores that sign requests are named from Store::Describe().
PreflightReport RunPreflight(storage::StoreRegistry& registry,
                             const std::vector<std::pair<std::string, std::string>>& inputs,
                             const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace ferry::job
