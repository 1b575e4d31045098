#pragma once
// The PostgreSQL tracker schema and its numbered migrations (the same tables as
// tracker/sqlite/schema.h: metric names once in metric_keys; points keyed
// (run_pk, key_id, step, ts, value) so a retried point is a primary-key conflict; per
// (run, key, level, bucket) summaries at the widths of sampling::kLevelWidths; each key's
// latest point).
//
// Migrate runs in one transaction under a transaction-scoped advisory lock keyed by the schema
// name, so two `ferry serve` replicas starting at once on an empty database do not race: the
// second waits, then finds the schema current. A database written by a newer ferry is refused
// (kFailedPrecondition).

#include <string>

#include "base/status.h"
#include "tracker/postgres/pg_db.h"

namespace ferry::tracker::postgres {

inline constexpr int kSchemaVersion = 2;

// Brings schema `schema` ("" = the connection's default, normally "public") up to
// kSchemaVersion, creating it when absent. `display` names the database in messages.
Status Migrate(Connection& db, const std::string& schema, const std::string& display);

}  // namespace ferry::tracker::postgres
