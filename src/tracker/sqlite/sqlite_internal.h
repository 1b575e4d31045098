#pragma once
// Small helpers the files of SqliteTrackerStore share.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "base/strings.h"
#include "tracker/model.h"

namespace ferry::tracker::sqlite {

// An experiment id ("12") as stored; nullopt for anything else (so: kNotFound).
inline std::optional<int64_t> ParseId(const std::string& id) {
  auto v = ParseUint64(id);
  if (!v || *v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(*v);
}

}  // namespace ferry::tracker::sqlite
