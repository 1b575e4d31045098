#pragma once
// MLflow's run search, evaluated over Run values (docs/semantics/mlflow.md, "Search"): every
// TrackerStore backend hands its candidate runs (TrackerStore::ScanRuns) to SearchRuns, so all
// backends filter, order and page the same way. Pure functions; thread-compatible.
//
// Filter grammar (MLflow's search_runs filter string, AND only):
//   filter  := clause { AND clause }
//   clause  := ident op value | ident [NOT] IN '(' value {',' value} ')' | ident IS [NOT] NULL
//   ident   := [entity '.'] key  where entity is metrics|metric|params|param|parameters|
//              tags|tag|attributes|attribute|attr|run (none: an attribute) and key is a bare
//              word ([A-Za-z0-9_.-/:]+, dots allowed) or a `backticked` / "double-quoted" key
//   op      := = | != | <> | < | <= | > | >= | LIKE | ILIKE   (keywords case-insensitive)
//   value   := a number, or a 'single' / "double" quoted string ('' escapes nothing: no escapes)
// Metrics and numeric attributes (start_time, end_time, created) take numbers and the six
// numeric comparators; params, tags and string attributes (run_id, run_name, status, user_id,
// artifact_uri) take quoted strings with =, !=, LIKE, ILIKE, IN, NOT IN. A run that lacks the
// metric, param or tag never matches a comparison on it (only IS NULL). Errors are
// kInvalidArgument with a message naming the offending part.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tracker/model.h"

namespace ferry::tracker {

enum class SearchEntity { kMetric, kParam, kTag, kAttribute };
// What a filter is about: runs, experiments (experiments/search: attributes name,
// creation_time, last_update_time and tags only) or MLflow 3's logged models (attributes name,
// model_id, model_type, status, source_run_id, experiment_id, creation_timestamp,
// last_updated_timestamp; params and tags; metrics are refused by tracker/logged_models.h).
// The Model Registry: registered models (name; tags; order also by creation_timestamp and
// last_updated_timestamp) and model versions (name, version_number, run_id, source_path,
// model_id, current_stage; tags).
enum class SearchTarget { kRuns, kExperiments, kLoggedModels, kRegisteredModels, kModelVersions };
enum class SearchOp { kEq, kNe, kLt, kLe, kGt, kGe, kLike, kILike, kIn, kNotIn, kIsNull, kNotNull };

// One parsed clause of a filter.
struct SearchClause {
  SearchEntity entity = SearchEntity::kAttribute;
  std::string key;  // the metric/param/tag key, or the attribute's canonical name
  SearchOp op = SearchOp::kEq;
  std::optional<double> number;      // numeric comparisons
  std::vector<std::string> strings;  // string comparisons: one value, or the IN list
};

// One ordering key ("metrics.loss DESC").
struct OrderKey {
  SearchEntity entity = SearchEntity::kAttribute;
  std::string key;
  bool ascending = true;
};

// The longest filter accepted (a bound on the work one request can ask for).
inline constexpr size_t kMaxFilterLength = 64 * 1024;
// The most runs one search page returns (MLflow's SEARCH_MAX_RESULTS_THRESHOLD).
inline constexpr int kMaxSearchResults = 50000;

Result<std::vector<SearchClause>> ParseFilter(std::string_view filter,
                                              SearchTarget target = SearchTarget::kRuns);
bool MatchesFilter(const Run& run, const std::vector<SearchClause>& clauses);
// Whether `c` holds for a value (`present` false: the entity lacks the key; then `number` or
// `text`, whichever the clause compares). For matching things other than runs.
bool ClauseHolds(const SearchClause& c, bool present, double number, std::string_view text);
// True for the attributes compared as numbers (start_time, end_time, creation_time,
// last_update_time, creation_timestamp, last_updated_timestamp, version_number).
bool IsNumericAttribute(std::string_view key);

// A run's value for (entity, key), as filters and orders see it: metrics (the latest value) and
// the time attributes are numbers, params, tags and the other attributes text; `present` is
// false when the run has no such value. `text` points into `run`.
struct RunValue {
  bool present = false;
  bool numeric = false;
  double number = 0;
  std::string_view text;
};
RunValue ValueOf(const Run& run, SearchEntity entity, std::string_view key);

// Each entry is "<ident> [ASC|DESC]".
Result<std::vector<OrderKey>> ParseOrderBy(const std::vector<std::string>& order_by,
                                           SearchTarget target = SearchTarget::kRuns);
// Sorts by `keys`, then start_time DESC, then run_id (MLflow's order). Runs lacking a key's
// value (or whose metric is NaN) come last whatever the direction.
void SortRuns(std::vector<Run>& runs, const std::vector<OrderKey>& keys);

// SQL LIKE: '%' any run of bytes, '_' one byte; ILIKE folds ASCII case. Linear memory,
// O(text * pattern) time at worst.
bool LikeMatch(std::string_view text, std::string_view pattern, bool ignore_case);

// Page tokens are opaque to clients: base64 of {"offset": N}. A token that does not decode is
// kInvalidArgument. "" is offset 0.
std::string EncodePageToken(size_t offset);
Result<size_t> DecodePageToken(std::string_view token);

// What a filter clause compares for things other than runs (logged models, registered models,
// model versions): ClauseHolds's arguments.
struct ClauseValue {
  bool present = false;
  double number = 0;
  std::string text;
};
// Whether every clause holds for the values `value_of(clause)` gives.
template <typename ValueOf>
bool AllClausesHold(const std::vector<SearchClause>& clauses, ValueOf value_of) {
  for (const auto& c : clauses) {
    ClauseValue v = value_of(c);
    if (!ClauseHolds(c, v.present, v.number, v.text)) return false;
  }
  return true;
}

// The page [offset, offset + max_results) of `all` (in the search's order), with the next
// page's token (EncodePageToken) when more follow.
template <typename T>
Page<T> PageOf(std::vector<T> all, size_t offset, int max_results) {
  Page<T> page;
  size_t end = std::min(all.size(), offset + static_cast<size_t>(max_results));
  for (size_t i = std::min(offset, all.size()); i < end; ++i) {
    page.items.push_back(std::move(all[i]));
  }
  if (end < all.size()) page.next_page_token = EncodePageToken(end);
  return page;
}

struct RunSearchRequest {
  std::string filter;
  std::vector<std::string> order_by;
  int max_results = 1000;  // 1..kMaxSearchResults
  std::string page_token;
};

// Filters, orders and pages `runs` (consumed).
Result<Page<Run>> SearchRuns(std::vector<Run> runs, const RunSearchRequest& request);

}  // namespace ferry::tracker
