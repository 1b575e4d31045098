// The filter half of tracker/search.h: a hand-written scanner over the filter text (no
// recursion, so hostile nesting cannot exhaust the stack; one pass, so huge input costs linear
// time) and the evaluation of the parsed clauses against a Run.
#include <cctype>
#include <charconv>
#include <cmath>

#include "base/strings.h"
#include "tracker/enum_names.h"
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
  if (experiments &&
      (clause->entity == SearchEntity::kMetric || clause->entity == SearchEntity::kParam)) {
    return sc.Error("experiments have no metrics or params (use name, tags or attributes)");
  }
  if (clause->entity == SearchEntity::kAttribute) {
    auto canonical = CanonicalAttribute(key, target);
    if (!canonical) {
      return sc.Error("unknown attribute '" + key + "' (expected " +
                      (experiments ? "name, creation_time or last_update_time"
                                   : "run_id, run_name, status, user_id, artifact_uri, "
                                     "start_time or end_time") +
                      ")");
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

// The value of `c`'s key in `run`: a number for numeric clauses, a string otherwise; nullopt
// when the run lacks it.
struct Found {
  bool present = false;
  double number = 0;
  std::string_view text;
};

Found Lookup(const Run& run, const SearchClause& c) {
  auto find = [&](const std::vector<Tag>& v) -> Found {
    for (const auto& t : v) {
      if (t.key == c.key) return {true, 0, t.value};
    }
    return {};
  };
  switch (c.entity) {
    case SearchEntity::kMetric:
      for (const auto& m : run.latest_metrics) {
        if (m.key == c.key) return {true, m.value, {}};
      }
      return {};
    case SearchEntity::kParam:
      return find(run.params);
    case SearchEntity::kTag:
      return find(run.tags);
    case SearchEntity::kAttribute:
      break;
  }
  const RunInfo& i = run.info;
  if (c.key == "start_time") return {true, static_cast<double>(i.start_time), {}};
  if (c.key == "end_time") {
    if (!i.end_time) return {};
    return {true, static_cast<double>(*i.end_time), {}};
  }
  if (c.key == "run_id") return {true, 0, i.run_id};
  if (c.key == "run_name") return {true, 0, i.run_name};
  if (c.key == "status") return {true, 0, RunStatusName(i.status)};
  if (c.key == "user_id") return {true, 0, i.user_id};
  if (c.key == "artifact_uri") return {true, 0, i.artifact_uri};
  return {};
}

}  // namespace

bool IsNumericAttribute(std::string_view key) {
  return key == "start_time" || key == "end_time" || key == "creation_time" ||
         key == "last_update_time";
}

bool ClauseHolds(const SearchClause& c, bool present, double number, std::string_view text) {
  if (c.op == SearchOp::kIsNull) return !present;
  if (c.op == SearchOp::kNotNull) return present;
  if (!present) return false;
  if (IsNumericClause(c)) {
    if (!c.number) return false;
    double a = number, b = *c.number;
    switch (c.op) {
      case SearchOp::kEq:
        return a == b;
      case SearchOp::kNe:
        return a != b;
      case SearchOp::kLt:
        return a < b;
      case SearchOp::kLe:
        return a <= b;
      case SearchOp::kGt:
        return a > b;
      case SearchOp::kGe:
        return a >= b;
      default:
        return false;
    }
  }
  auto in_list = [&] {
    for (const auto& s : c.strings) {
      if (text == s) return true;
    }
    return false;
  };
  if (c.strings.empty()) return false;
  switch (c.op) {
    case SearchOp::kEq:
      return text == c.strings[0];
    case SearchOp::kNe:
      return text != c.strings[0];
    case SearchOp::kLike:
      return LikeMatch(text, c.strings[0], false);
    case SearchOp::kILike:
      return LikeMatch(text, c.strings[0], true);
    case SearchOp::kIn:
      return in_list();
    case SearchOp::kNotIn:
      return !in_list();
    default:
      return false;
  }
}

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

bool MatchesFilter(const Run& run, const std::vector<SearchClause>& clauses) {
  for (const auto& c : clauses) {
    Found f = Lookup(run, c);
    if (!ClauseHolds(c, f.present, f.number, f.text)) return false;
  }
  return true;
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

bool LikeMatch(std::string_view text, std::string_view pattern, bool ignore_case) {
  auto eq = [ignore_case](char a, char b) {
    if (!ignore_case) return a == b;
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  };
  // Greedy match with backtracking to the last '%': each '%' restarts at most text.size()
  // times, and only the last one is remembered, so no exponential blow-up.
  size_t t = 0, p = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && (pattern[p] == '_' || eq(pattern[p], text[t]))) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

}  // namespace ferry::tracker
