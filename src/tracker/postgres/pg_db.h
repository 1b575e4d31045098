#pragma once
// A thin RAII layer over libpq for the tracker's PostgreSQL store: a connection that runs
// parameterised statements (PQexecParams, text format; never SQL built from values), a result
// with typed columns, a transaction guard, and the one translation of PostgreSQL errors into
// Status:
//  - connection loss, "the database is shutting down / starting up", too many connections,
//    serialization failures and deadlocks -> kUnavailable (retryable: the client tries again);
//  - unique violations -> kAlreadyExists; everything else kInternal.
// Messages name the operation and never carry the connection string (its password).
// Not thread-safe: one thread uses a Connection at a time (PostgresTrackerStore pools them).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct pg_conn;
struct pg_result;

namespace ferry::tracker::postgres {

// One statement parameter in text form; nullopt is SQL NULL.
using Param = std::optional<std::string>;

// An int64 parameter.
inline Param P(int64_t v) { return std::to_string(v); }
inline Param P(std::string_view v) { return std::string(v); }
// A PostgreSQL array literal of integers ("{1,2,3}") for `= ANY($1::bigint[])` and unnest.
Param IntArray(const std::vector<int64_t>& values);
// A PostgreSQL array literal of texts, each element quoted and escaped.
Param TextArray(const std::vector<std::string>& values);

// The rows of one statement's answer.
class Rows final {
 public:
  explicit Rows(pg_result* r);
  Rows(Rows&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  Rows& operator=(Rows&&) = delete;
  ~Rows();
  int size() const;
  bool empty() const { return size() == 0; }
  int64_t Int(int row, int col) const;
  std::string Text(int row, int col) const;
  bool IsNull(int row, int col) const;
  // Rows changed by an INSERT/UPDATE/DELETE.
  int64_t Changes() const;

 private:
  friend class Connection;
  pg_result* r_;
};

class Connection final {
 public:
  // Connects with libpq's connection string or URI `conninfo`; `display` names the database in
  // messages (the URL without its password). `search_path`: when not empty, the schema every
  // statement uses (created by the schema migration).
  static Result<std::unique_ptr<Connection>> Open(const std::string& conninfo,
                                                  const std::string& display,
                                                  const std::string& search_path);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs `sql` with `params` ($1, $2, ... in text form). `op` names the operation in messages.
  Result<Rows> Exec(std::string_view op, const char* sql, const std::vector<Param>& params = {});
  // Runs `sql`, one or more statements without parameters or results (schema migrations:
  // constant text only).
  Status ExecScript(std::string_view op, const char* sql);
  // False once the server connection is lost (the pool drops such connections).
  bool Healthy() const;
  // Reconnects a lost connection (the pool does so before handing it out again).
  Status Reset();

 private:
  Connection(pg_conn* c, std::string display, std::string search_path)
      : c_(c), display_(std::move(display)), search_path_(std::move(search_path)) {}
  Status SetSearchPath();
  // OK, or the Status of a failed statement's answer.
  Status Check(const Rows& rows, std::string_view op);
  pg_conn* c_;
  std::string display_;
  std::string search_path_;
};

// BEGIN ... COMMIT on one connection; rolls back unless Commit() succeeded.
class Transaction final {
 public:
  // read_only: a REPEATABLE READ READ ONLY snapshot (consistent multi-statement reads); else
  // READ COMMITTED, with row/advisory locks where writers must serialise.
  static Result<Transaction> Begin(Connection& c, bool read_only);
  Transaction(Transaction&& o) noexcept : c_(o.c_) { o.c_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status Commit();

 private:
  explicit Transaction(Connection* c) : c_(c) {}
  Connection* c_;
};

// The Status for a failed statement (or connection) with PostgreSQL's SQLSTATE `sqlstate`
// ("" when there is none: the connection is gone) and server message `message`.
Status PostgresError(std::string_view sqlstate, bool connection_lost, std::string_view op,
                     std::string_view message);

}  // namespace ferry::tracker::postgres
