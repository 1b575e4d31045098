#pragma once
// A thin RAII layer over SQLite's C API for the tracker's store: a connection with a cache of
// prepared statements, a statement with typed binds and columns, and the one translation of
// SQLite result codes into Status (SQLITE_BUSY/LOCKED -> kUnavailable, retryable; a constraint
// -> kAlreadyExists; everything else kInternal). Not thread-safe: one thread uses a Connection at
// a time (SqliteTrackerStore hands them out).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ferry::tracker::sqlite {

// Status for SQLite result code `rc` of `op` on `db` (nullptr: no message from the handle).
Status SqliteError(int rc, sqlite3* db, std::string_view op);

class Statement final {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds are 1-based, as in SQLite.
  Statement& Bind(int i, int64_t v);
  Statement& Bind(int i, std::string_view v);
  Statement& BindNull(int i);
  // Steps once: true when a row is ready, false when done.
  Result<bool> Step();
  // Steps to the end (for statements that return no rows).
  Status Run();
  int64_t Int(int col) const;
  std::string Text(int col) const;
  bool IsNull(int col) const;
  // Ready for the next use: reset and bindings cleared.
  void Reset();

 private:
  friend class Connection;
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// A cached statement in use; resets it when dropped, so no read stays open by accident (an
// un-reset SELECT would pin its WAL snapshot).
class StatementLease final {
 public:
  explicit StatementLease(Statement* s) : s_(s) {}
  StatementLease(StatementLease&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  StatementLease& operator=(StatementLease&&) = delete;
  ~StatementLease() {
    if (s_) s_->Reset();
  }
  Statement* operator->() const { return s_; }
  Statement& operator*() const { return *s_; }

 private:
  Statement* s_;
};

class Connection final {
 public:
  // Opens (creating when absent) the database at `path`; `busy_timeout_ms` is how long a
  // statement waits for another connection's lock before kUnavailable.
  static Result<std::unique_ptr<Connection>> Open(const std::string& path, int busy_timeout_ms);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements without results.
  Status Exec(std::string_view sql);
  // The statement for `sql`, prepared once per connection and reused (reset on each call).
  // `sql` must be a string literal (its address keys the cache); one lease per text at a time.
  Result<StatementLease> Prepare(const char* sql);
  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t Changes() const;
  sqlite3* handle() const { return db_; }

 private:
  explicit Connection(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::map<const char*, std::unique_ptr<Statement>> cache_;
};

// BEGIN ... COMMIT on one connection; rolls back unless Commit() succeeded.
class Transaction final {
 public:
  // immediate: take the write lock now (BEGIN IMMEDIATE), else a read snapshot (BEGIN).
  static Result<Transaction> Begin(Connection& c, bool immediate);
  Transaction(Transaction&& o) noexcept : c_(o.c_) { o.c_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status Commit();

 private:
  explicit Transaction(Connection* c) : c_(c) {}
  Connection* c_;
};

}  // namespace ferry::tracker::sqlite
