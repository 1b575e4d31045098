#include "tracker/sqlite/sqlite_db.h"

#include <sqlite3.h>

namespace ferry::tracker::sqlite {

Status SqliteError(int rc, sqlite3* db, std::string_view op) {
  std::string message = std::string(op) + ": " + sqlite3_errstr(rc);
  if (db != nullptr && sqlite3_errcode(db) == rc) {
    std::string detail = sqlite3_errmsg(db);
    if (detail != sqlite3_errstr(rc)) message += " (" + detail + ")";
  }
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Unavailable(message + "; the database is busy");
    case SQLITE_CONSTRAINT:
      return Status(StatusCode::kAlreadyExists, message);
    case SQLITE_FULL:
      return Status(StatusCode::kResourceExhausted, message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status(StatusCode::kDataLoss, message);
    default:
      return Internal(message);
  }
}

Statement& Statement::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
Statement& Statement::Bind(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(rc, db_, std::string("SQL '") + sqlite3_sql(stmt_) + "'");
}

Status Statement::Run() {
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status();
  }
}

int64_t Statement::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
std::string Statement::Text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : "";
}
bool Statement::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& path, int busy_timeout_ms) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status s = SqliteError(rc, db, "open tracker database '" + path + "'");
    sqlite3_close(db);
    return s;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return std::unique_ptr<Connection>(new Connection(db));
}

Connection::~Connection() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt->stmt_);
  cache_.clear();
  sqlite3_close(db_);
}

Status Connection::Exec(std::string_view sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &err);
  if (err) sqlite3_free(err);
  if (rc != SQLITE_OK) return SqliteError(rc, db_, "SQL '" + std::string(sql.substr(0, 60)) + "'");
  return Status();
}

Result<StatementLease> Connection::Prepare(const char* sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return StatementLease(it->second.get());
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(rc, db_, std::string("prepare '") + sql + "'");
  auto& slot = cache_[sql];
  slot = std::make_unique<Statement>(db_, stmt);
  return StatementLease(slot.get());
}

int64_t Connection::Changes() const { return sqlite3_changes64(db_); }

Result<Transaction> Transaction::Begin(Connection& c, bool immediate) {
  FERRY_RETURN_IF_ERROR(c.Exec(immediate ? "BEGIN IMMEDIATE" : "BEGIN"));
  return Transaction(&c);
}

Transaction::~Transaction() {
  if (c_) c_->Exec("ROLLBACK").IgnoreError();
}

Status Transaction::Commit() {
  Connection* c = c_;
  c_ = nullptr;
  Status s = c->Exec("COMMIT");
  if (!s.ok()) c->Exec("ROLLBACK").IgnoreError();
  return s;
}

}  // namespace ferry::tracker::sqlite
