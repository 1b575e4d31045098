#include "tracker/postgres/pg_db.h"

#include <libpq-fe.h>

#include <cstdlib>

#include "base/redact.h"

namespace ferry::tracker::postgres {
namespace {

// libpq's message on one line (it spreads hints over several, indented with tabs).
std::string Trimmed(const char* s) {
  std::string m;
  for (const char* p = s ? s : ""; *p; ++p) {
    if (*p == '\n' || *p == '\t') {
      if (!m.empty() && m.back() != ' ') m += ' ';
    } else {
      m += *p;
    }
  }
  while (!m.empty() && m.back() == ' ') m.pop_back();
  return m;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

Param IntArray(const std::vector<int64_t>& values) {
  std::string s = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(values[i]);
  }
  return s + "}";
}

Param TextArray(const std::vector<std::string>& values) {
  std::string s = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ',';
    s += '"';
    for (char ch : values[i]) {
      if (ch == '"' || ch == '\\') s += '\\';
      s += ch;
    }
    s += '"';
  }
  return s + "}";
}

Status PostgresError(std::string_view sqlstate, bool connection_lost, std::string_view op,
                     std::string_view message) {
  std::string m = Redact(std::string(op) + ": " + std::string(message));
  if (!sqlstate.empty()) m += " (SQLSTATE " + std::string(sqlstate) + ")";
  // 08: connection exceptions; 57P01-03: the server is shutting down or starting up; 53300: too
  // many connections; 40001/40P01: serialization failure / deadlock; 55P03: lock_timeout;
  // 57014: statement canceled (statement_timeout). All retried by the client.
  if (connection_lost || StartsWith(sqlstate, "08") || StartsWith(sqlstate, "57P0") ||
      sqlstate == "53300" || sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03" ||
      sqlstate == "57014") {
    return Unavailable(m + "; the tracker database is unreachable or busy, try again");
  }
  if (sqlstate == "23505") return Status(StatusCode::kAlreadyExists, m);
  if (sqlstate == "53100") return Status(StatusCode::kResourceExhausted, m);
  return Internal(m);
}

Rows::Rows(pg_result* r) : r_(r) {}
Rows::~Rows() {
  if (r_) PQclear(r_);
}
int Rows::size() const { return PQntuples(r_); }
int64_t Rows::Int(int row, int col) const {
  return std::strtoll(PQgetvalue(r_, row, col), nullptr, 10);
}
std::string Rows::Text(int row, int col) const {
  return std::string(PQgetvalue(r_, row, col), static_cast<size_t>(PQgetlength(r_, row, col)));
}
bool Rows::IsNull(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }
int64_t Rows::Changes() const {
  const char* n = PQcmdTuples(r_);
  return n && *n ? std::strtoll(n, nullptr, 10) : 0;
}

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& conninfo,
                                                     const std::string& display,
                                                     const std::string& search_path) {
  // Our defaults first: values in `conninfo` (expanded from dbname) override them. A replica
  // stuck inside a transaction (stopped, cut off) holds a run's row lock: the server ends such a
  // session after a minute, and a writer waits at most 30 s for a lock (then 503, retried).
  const char* keys[] = {"connect_timeout", "application_name", "options", "dbname", nullptr};
  const char* values[] = {"10", "ferry",
                          "-c lock_timeout=30000 -c idle_in_transaction_session_timeout=60000",
                          conninfo.c_str(), nullptr};
  pg_conn* c = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (c == nullptr) return Internal("connect to '" + display + "': out of memory");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string message = Trimmed(PQerrorMessage(c));
    PQfinish(c);
    return PostgresError("", /*connection_lost=*/true, "connect to '" + display + "'", message);
  }
  std::unique_ptr<Connection> conn(new Connection(c, display, search_path));
  FERRY_RETURN_IF_ERROR(conn->SetSearchPath());
  return conn;
}

Connection::~Connection() { PQfinish(c_); }

Status Connection::SetSearchPath() {
  if (search_path_.empty()) return Status();
  char* quoted = PQescapeIdentifier(c_, search_path_.data(), search_path_.size());
  if (quoted == nullptr) return Internal("set search_path: " + Trimmed(PQerrorMessage(c_)));
  std::string path = quoted;
  PQfreemem(quoted);
  return Exec("set search_path", "SELECT set_config('search_path', $1, false)", {path}).status();
}

bool Connection::Healthy() const { return PQstatus(c_) == CONNECTION_OK; }

Status Connection::Reset() {
  PQreset(c_);
  if (PQstatus(c_) != CONNECTION_OK) {
    return PostgresError("", true, "reconnect to '" + display_ + "'", Trimmed(PQerrorMessage(c_)));
  }
  return SetSearchPath();
}

Result<Rows> Connection::Exec(std::string_view op, const char* sql,
                              const std::vector<Param>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  pg_result* r = PQexecParams(c_, sql, static_cast<int>(values.size()), nullptr, values.data(),
                              nullptr, nullptr, /*resultFormat=*/0);
  Rows rows(r);
  FERRY_RETURN_IF_ERROR(Check(rows, op));
  return rows;
}

Status Connection::Check(const Rows& rows, std::string_view op) {
  pg_result* r = rows.r_;
  ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return Status();
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  const char* primary = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  std::string message = primary ? Trimmed(primary) : Trimmed(PQerrorMessage(c_));
  return PostgresError(state ? state : "", PQstatus(c_) != CONNECTION_OK,
                       std::string(op) + " on '" + display_ + "'", message);
}

Status Connection::ExecScript(std::string_view op, const char* sql) {
  Rows rows(PQexec(c_, sql));
  return Check(rows, op);
}

Result<Transaction> Transaction::Begin(Connection& c, bool read_only) {
  FERRY_RETURN_IF_ERROR(
      c.Exec("BEGIN", read_only ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN")
          .status());
  return Transaction(&c);
}

Transaction::~Transaction() {
  if (c_ && c_->Healthy()) c_->Exec("ROLLBACK", "ROLLBACK").status().IgnoreError();
}

Status Transaction::Commit() {
  Connection* c = c_;
  c_ = nullptr;
  return c->Exec("COMMIT", "COMMIT").status();
}

}  // namespace ferry::tracker::postgres
