#include "tracker/mlflow/experiment_search.h"

#include <algorithm>

#include "tracker/search.h"

namespace ferry::tracker::mlflow {
namespace {

// Bounds the store reads of one search (1000 pages of the store's page size).
constexpr int kMaxStorePages = 1000;

struct Value {
  bool present = false;
  double number = 0;
  std::string_view text;
};

Value ValueOf(const Experiment& e, SearchEntity entity, const std::string& key) {
  if (entity == SearchEntity::kTag) {
    for (const auto& t : e.tags) {
      if (t.key == key) return {true, 0, t.value};
    }
    return {};
  }
  if (key == "name") return {true, 0, e.name};
  if (key == "experiment_id") return {true, 0, e.id};
  if (key == "creation_time") return {true, static_cast<double>(e.creation_time), {}};
  if (key == "last_update_time") return {true, static_cast<double>(e.last_update_time), {}};
  return {};
}

// Numeric ids compare as numbers ("10" after "9").
bool IdLess(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

}  // namespace

Result<Page<Experiment>> SearchExperiments(TrackerStore& store, const ExperimentSearch& s) {
  if (s.max_results < 1 || s.max_results > kMaxSearchResults) {
    return InvalidArgument("max_results must be between 1 and " +
                           std::to_string(kMaxSearchResults));
  }
  FERRY_ASSIGN_OR_RETURN(auto clauses, ParseFilter(s.filter, SearchTarget::kExperiments));
  FERRY_ASSIGN_OR_RETURN(auto keys, ParseOrderBy(s.order_by, SearchTarget::kExperiments));
  FERRY_ASSIGN_OR_RETURN(size_t offset, DecodePageToken(s.page_token));
  for (const auto& k : keys) {
    if (k.entity != SearchEntity::kAttribute) {
      return InvalidArgument(
          "experiments can be ordered by name, experiment_id, creation_time "
          "or last_update_time only");
    }
  }
  if (keys.empty()) keys.push_back({SearchEntity::kAttribute, "last_update_time", false});

  std::vector<Experiment> all;
  ExperimentQuery q;
  q.view = s.view;
  for (int pages = 0;; ++pages) {
    if (pages == kMaxStorePages) return Internal("experiments/search: too many store pages");
    FERRY_ASSIGN_OR_RETURN(auto page, store.SearchExperiments(q));
    for (auto& e : page.items) all.push_back(std::move(e));
    if (page.next_page_token.empty()) break;
    q.page_token = page.next_page_token;
  }
  std::erase_if(all, [&](const Experiment& e) {
    for (const auto& c : clauses) {
      Value v = ValueOf(e, c.entity, c.key);
      if (!ClauseHolds(c, v.present, v.number, v.text)) return true;
    }
    return false;
  });
  // Ids are unique, so the order is total and std::sort is enough (std::stable_sort's
  // libstdc++ 12 buffer is a deprecated API that clang's -Werror build refuses).
  std::sort(all.begin(), all.end(), [&](const Experiment& a, const Experiment& b) {
    for (const auto& k : keys) {
      Value va = ValueOf(a, k.entity, k.key), vb = ValueOf(b, k.entity, k.key);
      int c = 0;
      if (k.key == "experiment_id") {
        c = IdLess(a.id, b.id) ? -1 : (IdLess(b.id, a.id) ? 1 : 0);
      } else if (IsNumericAttribute(k.key)) {
        c = va.number < vb.number ? -1 : (va.number > vb.number ? 1 : 0);
      } else {
        c = va.text.compare(vb.text);
      }
      if (c != 0) return k.ascending ? c < 0 : c > 0;
    }
    return IdLess(a.id, b.id);
  });
  Page<Experiment> out;
  size_t end = std::min(all.size(), offset + static_cast<size_t>(s.max_results));
  for (size_t i = offset; i < end; ++i) out.items.push_back(std::move(all[i]));
  if (end < all.size()) out.next_page_token = EncodePageToken(end);
  return out;
}

}  // namespace ferry::tracker::mlflow
