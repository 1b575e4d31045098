#pragma once
// Small helpers the files of PostgresTrackerStore share.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "base/status.h"
#include "base/strings.h"
#include "tracker/model.h"

namespace ferry::tracker::postgres {

// An experiment id ("12") as stored; nullopt for anything else (so: kNotFound).
inline std::optional<int64_t> ParseId(const std::string& id) {
  auto v = ParseUint64(id);
  if (!v || *v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(*v);
}

inline Status Precondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}

}  // namespace ferry::tracker::postgres
