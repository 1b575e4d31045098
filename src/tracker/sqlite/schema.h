#pragma once
// The tracker database's schema and its numbered migrations. `schema_version` holds one row;
// Migrate applies every step past it in one transaction and refuses a database written by a
// newer ferry (kFailedPrecondition) rather than guess at it.
//
// Metric points are stored compactly: metric names once in metric_keys, points in a
// WITHOUT ROWID table keyed (run_pk, key_id, step, ts, value) whose key order is the history
// order (value as rules::OrderedBits), so a retried point is a primary-key hit. summaries holds
// per (run, key, level, bucket) the count and the first/last/min/max points at the widths of
// sampling::kLevelWidths, kept up to date by LogBatch; latest_metrics holds each key's latest.
// docs (version 2) holds the documents of tracker/doc_txn.h by (kind, key).

#include <string>

#include "base/status.h"
#include "tracker/sqlite/sqlite_db.h"

namespace ferry::tracker::sqlite {

inline constexpr int kSchemaVersion = 2;

// Brings the database up to kSchemaVersion (creating it when empty). `path` is for messages.
Status Migrate(Connection& db, const std::string& path);

}  // namespace ferry::tracker::sqlite
