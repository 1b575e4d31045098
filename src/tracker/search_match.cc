// The evaluation half of tracker/search.h's filters: parsed clauses against a Run (or any
// value, through ClauseHolds), and SQL LIKE.
#include <cctype>

#include "tracker/enum_names.h"
#include "tracker/search.h"

namespace ferry::tracker {
namespace {

bool IsNumericClause(const SearchClause& c) {
  return c.entity == SearchEntity::kMetric ||
         (c.entity == SearchEntity::kAttribute && IsNumericAttribute(c.key));
}

}  // namespace

RunValue ValueOf(const Run& run, SearchEntity entity, std::string_view key) {
  auto text = [](std::string_view t) { return RunValue{true, false, 0, t}; };
  auto number = [](double d) { return RunValue{true, true, d, {}}; };
  auto find = [&](const std::vector<Tag>& v) {
    for (const auto& t : v) {
      if (t.key == key) return text(t.value);
    }
    return RunValue{};
  };
  switch (entity) {
    case SearchEntity::kMetric:
      for (const auto& m : run.latest_metrics) {
        if (m.key == key) return number(m.value);
      }
      return RunValue{};
    case SearchEntity::kParam:
      return find(run.params);
    case SearchEntity::kTag:
      return find(run.tags);
    case SearchEntity::kAttribute:
      break;
  }
  const RunInfo& i = run.info;
  if (key == "start_time") return number(static_cast<double>(i.start_time));
  if (key == "end_time") return i.end_time ? number(static_cast<double>(*i.end_time)) : RunValue{};
  if (key == "run_id") return text(i.run_id);
  if (key == "run_name") return text(i.run_name);
  if (key == "status") return text(RunStatusName(i.status));
  if (key == "user_id") return text(i.user_id);
  if (key == "artifact_uri") return text(i.artifact_uri);
  return RunValue{};
}

bool IsNumericAttribute(std::string_view key) {
  return key == "start_time" || key == "end_time" || key == "creation_time" ||
         key == "last_update_time" || key == "creation_timestamp" ||
         key == "last_updated_timestamp" || key == "version_number";
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

bool MatchesFilter(const Run& run, const std::vector<SearchClause>& clauses) {
  for (const auto& c : clauses) {
    RunValue f = ValueOf(run, c.entity, c.key);
    if (!ClauseHolds(c, f.present, f.number, f.text)) return false;
  }
  return true;
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
