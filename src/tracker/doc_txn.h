#pragma once
// Documents: how the tracker keeps its newer entities (MLflow 3's logged models, run inputs and
// outputs, the Model Registry). Each is a JSON text under (kind, key), read and changed inside
// one transaction (TrackerStore::Transact). The rules of those entities live once
// (tracker/logged_models.h, tracker/run_io.h), over this interface, so every backend (memory,
// SQLite, PostgreSQL) keeps them alike without repeating them: a backend only stores texts by key.
//
// Isolation: write transactions are serialised (one at a time over the whole document space);
// a read transaction sees one consistent snapshot. A body that returns an error rolls its
// transaction back: nothing it put or deleted remains.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace ferry::tracker {

class DocTxn {
 public:
  virtual ~DocTxn() = default;
  // The document under (kind, key), or nullopt.
  virtual Result<std::optional<std::string>> Get(std::string_view kind, std::string_view key) = 0;
  // Creates or replaces it (write transactions only; kFailedPrecondition in a read one).
  virtual Status Put(std::string_view kind, std::string_view key, std::string_view doc) = 0;
  // Removes it; absent is OK.
  virtual Status Delete(std::string_view kind, std::string_view key) = 0;
  // (key, document) of every document of `kind` whose key starts with `key_prefix`, by key.
  virtual Result<std::vector<std::pair<std::string, std::string>>> Scan(
      std::string_view kind, std::string_view key_prefix) = 0;
};

enum class TxnMode { kRead, kWrite };

using DocBody = std::function<Status(DocTxn&)>;

}  // namespace ferry::tracker
