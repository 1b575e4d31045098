// The store's documents (tracker/doc_txn.h) in the table `docs` (schema version 2).
#include "tracker/sqlite/sqlite_internal.h"
#include "tracker/sqlite/sqlite_tracker_store.h"

namespace ferry::tracker {
namespace {

using sqlite::Connection;
using sqlite::Transaction;

class SqliteDocTxn final : public DocTxn {
 public:
  SqliteDocTxn(Connection& c, bool writable) : c_(c), writable_(writable) {}

  Result<std::optional<std::string>> Get(std::string_view kind, std::string_view key) override {
    FERRY_ASSIGN_OR_RETURN(auto q, c_.Prepare("SELECT doc FROM docs WHERE kind = ? AND key = ?"));
    q->Bind(1, kind).Bind(2, key);
    FERRY_ASSIGN_OR_RETURN(bool found, q->Step());
    if (!found) return std::optional<std::string>();
    return std::optional<std::string>(q->Text(0));
  }
  Status Put(std::string_view kind, std::string_view key, std::string_view doc) override {
    if (!writable_) return Status(StatusCode::kFailedPrecondition, "Put in a read transaction");
    FERRY_ASSIGN_OR_RETURN(auto q, c_.Prepare("INSERT INTO docs (kind, key, doc) VALUES (?, ?, ?) "
                                              "ON CONFLICT (kind, key) DO UPDATE SET doc = "
                                              "excluded.doc"));
    q->Bind(1, kind).Bind(2, key).Bind(3, doc);
    return q->Run();
  }
  Status Delete(std::string_view kind, std::string_view key) override {
    if (!writable_) return Status(StatusCode::kFailedPrecondition, "Delete in a read transaction");
    FERRY_ASSIGN_OR_RETURN(auto q, c_.Prepare("DELETE FROM docs WHERE kind = ? AND key = ?"));
    q->Bind(1, kind).Bind(2, key);
    return q->Run();
  }
  Result<std::vector<std::pair<std::string, std::string>>> Scan(
      std::string_view kind, std::string_view key_prefix) override {
    // Keys compare as bytes (BINARY collation), the order every backend returns.
    FERRY_ASSIGN_OR_RETURN(auto q, c_.Prepare("SELECT key, doc FROM docs WHERE kind = ?1 AND "
                                              "key >= ?2 AND substr(key, 1, length(?2)) = ?2 "
                                              "ORDER BY key"));
    q->Bind(1, kind).Bind(2, key_prefix);
    std::vector<std::pair<std::string, std::string>> out;
    while (true) {
      FERRY_ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) break;
      out.emplace_back(q->Text(0), q->Text(1));
    }
    return out;
  }

 private:
  Connection& c_;
  const bool writable_;
};

}  // namespace

Status SqliteTrackerStore::Transact(TxnMode mode, const DocBody& body) {
  if (mode == TxnMode::kRead) {
    FERRY_ASSIGN_OR_RETURN(Reader r, AcquireReader());
    FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(*r, false));
    SqliteDocTxn txn(*r, false);
    return body(txn);
  }
  MutexLock lock(write_mu_);
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(*writer_, true));
  SqliteDocTxn txn(*writer_, true);
  FERRY_RETURN_IF_ERROR(body(txn));
  return tx.Commit();
}

}  // namespace ferry::tracker
