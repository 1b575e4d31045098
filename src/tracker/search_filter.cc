// The parsing half of tracker/search.h's filters and order_by: a hand-written scanner over the
// text (no recursion, so hostile nesting cannot exhaust the stack; one pass, so huge input
// costs linear time). Evaluation is in search_match.cc.
#include <cctype>
#include <charconv>

#include "base/strings.h"
#include "tracker/search.h"

namespace ferry::tracker {
namespace {

bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
         c == '/' || c == ':';
}

// The canonical attribute name, or nullopt for an unknown one.
std::optional<std::string> CanonicalAttribute(std::string_view key, SearchTarget target) {
  std::string k = ToLower(key);
  if (target == SearchTarget::kExperiments) {
    for (const char* a : {"name", "creation_time", "last_update_time", "experiment_id"}) {
      if (k == a) return k;
    }
    return std::nullopt;
  }
  if (target == SearchTarget::kRegisteredModels) {
    for (const char* a : {"name", "creation_timestamp", "last_updated_timestamp"}) {
      if (k == a) return k;
    }
    return std::nullopt;
  }
  if (target == SearchTarget::kModelVersions) {
    for (const char* a : {"name", "version_number", "run_id", "source_path", "model_id",
                          "current_stage", "creation_timestamp", "last_updated_timestamp"}) {
      if (k == a) return k;
    }
    return std::nullopt;
  }
  if (target == SearchTarget::kLoggedModels) {
    if (k == "creation_time") return "creation_timestamp";
    if (k == "last_updated_time") return "last_updated_timestamp";
    for (const char* a : {"name", "model_id", "model_type", "status", "source_run_id",
                          "experiment_id", "creation_timestamp", "last_updated_timestamp"}) {
      if (k == a) return k;
    }
    return std::nullopt;
  }
  if (k == "created") return "start_time";
  for (const char* a :
       {"run_id", "run_name", "status", "user_id", "artifact_uri", "start_time", "end_time"}) {
    if (k == a) return k;
  }
  return std::nullopt;
}

std::optional<SearchEntity> EntityOf(std::string_view word) {
  std::string w = ToLower(word);
  if (w == "metrics" || w == "metric") return SearchEntity::kMetric;
  if (w == "params" || w == "param" || w == "parameters") return SearchEntity::kParam;
  if (w == "tags" || w == "tag") return SearchEntity::kTag;
  if (w == "attributes" || w == "attribute" || w == "attr" || w == "run") {
    return SearchEntity::kAttribute;
  }
  return std::nullopt;
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : s_(text) {}

  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= s_.size();
  }
  char Peek() { return AtEnd() ? '\0' : s_[pos_]; }
  size_t pos() const { return pos_; }

  Status Error(std::string what) const {
    return InvalidArgument("invalid filter at character " + std::to_string(pos_ + 1) + ": " +
                           std::move(what));
  }

  // A quoted run of bytes; `quote` is the opening character (already at pos_).
  Result<std::string> Quoted() {
    char quote = s_[pos_];
    size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) {
      return Error(std::string("unterminated ") + quote + " quote");
    }
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }

  std::string_view Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < s_.size() && IsKeyChar(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }

  // Consumes `keyword` (case-insensitive, as a whole word) if it is next.
  bool Keyword(std::string_view keyword) {
    SkipSpace();
    if (s_.size() - pos_ < keyword.size()) return false;
    if (!EqualsIgnoreCase(s_.substr(pos_, keyword.size()), keyword)) return false;
    size_t after = pos_ + keyword.size();
    if (after < s_.size() && IsKeyChar(s_[after])) return false;
    pos_ = after;
    return true;
  }

  bool Symbol(std::string_view sym) {
    SkipSpace();
    if (s_.substr(pos_, sym.size()) != sym) return false;
    pos_ += sym.size();
    return true;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

// A value: a number or a quoted string.
struct Value {
  std::optional<double> number;
  std::optional<std::string> text;
};

Result<Value> ParseValue(Scanner& sc) {
  char c = sc.Peek();
  if (c == '\'' || c == '"') {
    FERRY_ASSIGN_OR_RETURN(std::string text, sc.Quoted());
    return Value{std::nullopt, std::move(text)};
  }
  std::string_view word = sc.Word();
  if (word.empty()) return sc.Error("expected a value");
  double d = 0;
  auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), d);
  if (ec != std::errc() || ptr != word.data() + word.size()) {
    return sc.Error("expected a number or a quoted string, got '" + std::string(word) + "'");
  }
  return Value{d, std::nullopt};
}

Status ParseIdent(Scanner& sc, SearchTarget target, SearchClause* clause) {
  char c = sc.Peek();
  std::string key;
  std::optional<SearchEntity> entity;
  if (c == '`' || c == '"') {
    FERRY_ASSIGN_OR_RETURN(key, sc.Quoted());
  } else {
    std::string_view word = sc.Word();
    if (word.empty()) return sc.Error("expected a key such as metrics.loss");
    size_t dot = word.find('.');
    if (dot == std::string_view::npos) {
      key = std::string(word);
    } else {
      entity = EntityOf(word.substr(0, dot));
      if (!entity) {
        return sc.Error("unknown entity '" + std::string(word.substr(0, dot)) +
                        "' (expected metrics, params, tags or attributes)");
      }
      key = std::string(word.substr(dot + 1));
      if (key.empty()) {
        char q = sc.Peek();
        if (q != '`' && q != '"') return sc.Error("expected a key after '.'");
        FERRY_ASSIGN_OR_RETURN(key, sc.Quoted());
      }
    }
  }
  clause->entity = entity.value_or(SearchEntity::kAttribute);
  if (key.empty()) return sc.Error("empty key");
  bool experiments = target == SearchTarget::kExperiments;
  bool registry =
      target == SearchTarget::kRegisteredModels || target == SearchTarget::kModelVersions;
  if ((experiments || registry) &&
      (clause->entity == SearchEntity::kMetric || clause->entity == SearchEntity::kParam)) {
    return sc.Error(experiments
                        ? "experiments have no metrics or params (use name, tags or attributes)"
                        : "registered models and versions have no metrics or params (use name, "
                          "tags or attributes)");
  }
  if (clause->entity == SearchEntity::kAttribute) {
    auto canonical = CanonicalAttribute(key, target);
    if (!canonical) {
      const char* expected =
          experiments ? "name, creation_time or last_update_time"
          : target == SearchTarget::kRegisteredModels
              ? "name (order_by also creation_timestamp, last_updated_timestamp)"
          : target == SearchTarget::kModelVersions
              ? "name, version_number, run_id, source_path, model_id or current_stage"
          : target == SearchTarget::kLoggedModels
              ? "name, model_id, model_type, status, source_run_id, experiment_id, "
                "creation_timestamp or last_updated_timestamp"
              : "run_id, run_name, status, user_id, artifact_uri, start_time or end_time";
      return sc.Error("unknown attribute '" + key + "' (expected " + expected + ")");
    }
    key = *canonical;
  }
  clause->key = std::move(key);
  return Status();
}

Result<SearchOp> ParseOp(Scanner& sc) {
  if (sc.Symbol("!=") || sc.Symbol("<>")) return SearchOp::kNe;
  if (sc.Symbol("<=")) return SearchOp::kLe;
  if (sc.Symbol(">=")) return SearchOp::kGe;
  if (sc.Symbol("=")) return SearchOp::kEq;
  if (sc.Symbol("<")) return SearchOp::kLt;
  if (sc.Symbol(">")) return SearchOp::kGt;
  if (sc.Keyword("LIKE")) return SearchOp::kLike;
  if (sc.Keyword("ILIKE")) return SearchOp::kILike;
  if (sc.Keyword("IN")) return SearchOp::kIn;
  if (sc.Keyword("NOT")) {
    if (sc.Keyword("IN")) return SearchOp::kNotIn;
    return sc.Error("expected IN after NOT");
  }
  if (sc.Keyword("IS")) {
    bool negated = sc.Keyword("NOT");
    if (!sc.Keyword("NULL")) return sc.Error("expected NULL after IS");
    return negated ? SearchOp::kNotNull : SearchOp::kIsNull;
  }
  return sc.Error("expected a comparator (=, !=, <, <=, >, >=, LIKE, ILIKE, IN, NOT IN, IS NULL)");
}

bool IsNumericClause(const SearchClause& c) {
  return c.entity == SearchEntity::kMetric ||
         (c.entity == SearchEntity::kAttribute && IsNumericAttribute(c.key));
}

std::string Describe(const SearchClause& c) {
  switch (c.entity) {
    case SearchEntity::kMetric:
      return "metrics." + c.key;
    case SearchEntity::kParam:
      return "params." + c.key;
    case SearchEntity::kTag:
      return "tags." + c.key;
    case SearchEntity::kAttribute:
      return "attributes." + c.key;
  }
  return c.key;
}

Status ParseOperand(Scanner& sc, SearchClause* clause) {
  if (clause->op == SearchOp::kIsNull || clause->op == SearchOp::kNotNull) return Status();
  bool numeric = IsNumericClause(*clause);
  bool string_only_op = clause->op == SearchOp::kLike || clause->op == SearchOp::kILike ||
                        clause->op == SearchOp::kIn || clause->op == SearchOp::kNotIn;
  if (numeric && string_only_op) {
    return sc.Error("comparator not allowed for the numeric " + Describe(*clause));
  }
  bool ordered_op = clause->op == SearchOp::kLt || clause->op == SearchOp::kLe ||
                    clause->op == SearchOp::kGt || clause->op == SearchOp::kGe;
  if (!numeric && ordered_op) {
    return sc.Error("comparator not allowed for the string " + Describe(*clause) +
                    " (use =, !=, LIKE, ILIKE, IN)");
  }
  auto expect_string = [&](const Value& v) -> Status {
    if (!v.text) return sc.Error("expected a quoted string for " + Describe(*clause));
    clause->strings.push_back(*v.text);
    return Status();
  };
  if (clause->op == SearchOp::kIn || clause->op == SearchOp::kNotIn) {
    if (!sc.Symbol("(")) return sc.Error("expected '(' after IN");
    do {
      FERRY_ASSIGN_OR_RETURN(Value v, ParseValue(sc));
      FERRY_RETURN_IF_ERROR(expect_string(v));
    } while (sc.Symbol(","));
    if (!sc.Symbol(")")) return sc.Error("expected ',' or ')' in the IN list");
    return Status();
  }
  FERRY_ASSIGN_OR_RETURN(Value v, ParseValue(sc));
  if (numeric) {
    if (!v.number) return sc.Error("expected a number for " + Describe(*clause));
    clause->number = v.number;
    return Status();
  }
  return expect_string(v);
}

}  // namespace

Result<std::vector<SearchClause>> ParseFilter(std::string_view filter, SearchTarget target) {
  std::vector<SearchClause> clauses;
  if (filter.size() > kMaxFilterLength) {
    return InvalidArgument("filter is " + std::to_string(filter.size()) +
                           " characters long; at most " + std::to_string(kMaxFilterLength));
  }
  Scanner sc(filter);
  if (sc.AtEnd()) return clauses;
  while (true) {
    SearchClause clause;
    FERRY_RETURN_IF_ERROR(ParseIdent(sc, target, &clause));
    FERRY_ASSIGN_OR_RETURN(clause.op, ParseOp(sc));
    FERRY_RETURN_IF_ERROR(ParseOperand(sc, &clause));
    clauses.push_back(std::move(clause));
    if (sc.AtEnd()) break;
    if (sc.Keyword("OR")) return sc.Error("OR is not supported (only AND)");
    if (!sc.Keyword("AND")) return sc.Error("expected AND or the end of the filter");
  }
  return clauses;
}

Result<std::vector<OrderKey>> ParseOrderBy(const std::vector<std::string>& order_by,
                                           SearchTarget target) {
  std::vector<OrderKey> keys;
  for (const auto& text : order_by) {
    if (text.size() > kMaxFilterLength) return InvalidArgument("order_by entry is too long");
    Scanner sc(text);
    SearchClause c;
    Status st = ParseIdent(sc, target, &c);
    if (!st.ok()) return st.WithContext("invalid order_by '" + text + "'");
    OrderKey key{c.entity, std::move(c.key), true};
    if (sc.Keyword("DESC")) {
      key.ascending = false;
    } else {
      sc.Keyword("ASC");
    }
    if (!sc.AtEnd()) {
      return InvalidArgument("invalid order_by '" + text +
                             "': expected '<key> [ASC|DESC]', such as 'metrics.loss DESC'");
    }
    keys.push_back(std::move(key));
  }
  return keys;
}

}  // namespace ferry::tracker
