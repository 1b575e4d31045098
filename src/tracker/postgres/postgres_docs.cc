// The store's documents (tracker/doc_txn.h) in the table `docs` (schema version 2). Write
// transactions serialise on one advisory lock, so a body's read-modify-write of several
// documents (a registered model and its next version number) is never interleaved with another
// replica's; reads are one REPEATABLE READ snapshot.
#include "tracker/postgres/pg_internal.h"
#include "tracker/postgres/postgres_tracker_store.h"

namespace ferry::tracker {
namespace {

using postgres::Connection;
using postgres::P;

class PostgresDocTxn final : public DocTxn {
 public:
  PostgresDocTxn(Connection& c, bool writable) : c_(c), writable_(writable) {}

  Result<std::optional<std::string>> Get(std::string_view kind, std::string_view key) override {
    FERRY_ASSIGN_OR_RETURN(
        auto rows, c_.Exec("Get document", "SELECT doc FROM docs WHERE kind = $1 AND key = $2",
                           {P(kind), P(key)}));
    if (rows.empty()) return std::optional<std::string>();
    return std::optional<std::string>(rows.Text(0, 0));
  }
  Status Put(std::string_view kind, std::string_view key, std::string_view doc) override {
    if (!writable_) return postgres::Precondition("Put in a read transaction");
    return c_
        .Exec("Put document",
              "INSERT INTO docs (kind, key, doc) VALUES ($1, $2, $3) ON CONFLICT (kind, key) DO "
              "UPDATE SET doc = excluded.doc",
              {P(kind), P(key), P(doc)})
        .status();
  }
  Status Delete(std::string_view kind, std::string_view key) override {
    if (!writable_) return postgres::Precondition("Delete in a read transaction");
    return c_
        .Exec("Delete document", "DELETE FROM docs WHERE kind = $1 AND key = $2", {P(kind), P(key)})
        .status();
  }
  Result<std::vector<std::pair<std::string, std::string>>> Scan(
      std::string_view kind, std::string_view key_prefix) override {
    FERRY_ASSIGN_OR_RETURN(auto rows, c_.Exec("Scan documents",
                                              "SELECT key, doc FROM docs WHERE kind = $1 AND "
                                              "starts_with(key, $2) ORDER BY key COLLATE \"C\"",
                                              {P(kind), P(key_prefix)}));
    std::vector<std::pair<std::string, std::string>> out;
    out.reserve(static_cast<size_t>(rows.size()));
    for (int i = 0; i < rows.size(); ++i) out.emplace_back(rows.Text(i, 0), rows.Text(i, 1));
    return out;
  }

 private:
  Connection& c_;
  const bool writable_;
};

}  // namespace

Status PostgresTrackerStore::Transact(TxnMode mode, const DocBody& body) {
  bool write = mode == TxnMode::kWrite;
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(/*read_only=*/!write));
  if (write) {
    FERRY_RETURN_IF_ERROR(
        (*s).Exec("Transact", "SELECT pg_advisory_xact_lock(hashtext('ferry.tracker.docs'))")
            .status());
  }
  PostgresDocTxn txn(*s, write);
  FERRY_RETURN_IF_ERROR(body(txn));
  return s.Commit();
}

}  // namespace ferry::tracker
