// The order and paging half of tracker/search.h (the filter is in search_filter.cc).
#include "tracker/search.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "base/hash.h"
#include "tracker/enum_names.h"

namespace ferry::tracker {
namespace {

// One run's value for one order key; NaN sorts as missing.
RunValue ValueFor(const Run& run, const OrderKey& key) {
  RunValue v = ValueOf(run, key.entity, key.key);
  if (v.numeric && std::isnan(v.number)) return RunValue{};
  return v;
}

// <0, 0, >0 like strcmp; missing values after present ones in either direction.
int Compare(const RunValue& a, const RunValue& b, bool ascending) {
  if (a.present != b.present) return a.present ? -1 : 1;
  if (!a.present) return 0;
  int c = 0;
  if (a.numeric) {
    c = a.number < b.number ? -1 : (a.number > b.number ? 1 : 0);
  } else {
    c = a.text.compare(b.text);
    c = c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  return ascending ? c : -c;
}

constexpr std::string_view kBase64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::optional<std::string> Base64Decode(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  size_t i = 0;
  for (; i < in.size() && in[i] != '='; ++i) {
    size_t v = kBase64.find(in[i]);
    if (v == std::string_view::npos) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  for (; i < in.size(); ++i) {
    if (in[i] != '=') return std::nullopt;
  }
  return out;
}

}  // namespace

void SortRuns(std::vector<Run>& runs, const std::vector<OrderKey>& keys) {
  std::vector<OrderKey> all = keys;
  all.push_back({SearchEntity::kAttribute, "start_time", false});
  all.push_back({SearchEntity::kAttribute, "run_id", true});
  std::vector<std::vector<RunValue>> values(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const auto& k : all) values[r].push_back(ValueFor(runs[r], k));
  }
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // std::sort with the index as the last key is a stable sort (std::stable_sort's libstdc++ 12
  // buffer is a deprecated API that clang's -Werror build refuses).
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    for (size_t k = 0; k < all.size(); ++k) {
      int c = Compare(values[a][k], values[b][k], all[k].ascending);
      if (c != 0) return c < 0;
    }
    return a < b;
  });
  std::vector<Run> sorted;
  sorted.reserve(runs.size());
  for (size_t i : order) sorted.push_back(std::move(runs[i]));
  runs = std::move(sorted);
}

std::string EncodePageToken(size_t offset) {
  std::string json = "{\"offset\": " + std::to_string(offset) + "}";
  return Base64Encode(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(json.data()), json.size()));
}

Result<size_t> DecodePageToken(std::string_view token) {
  if (token.empty()) return size_t{0};
  auto bad = [&] {
    return InvalidArgument("invalid page_token '" + std::string(token.substr(0, 100)) +
                           "' (not a token this server made)");
  };
  if (token.size() > 200) return bad();
  auto json = Base64Decode(token);
  constexpr std::string_view kPrefix = "{\"offset\": ";
  if (!json || json->size() <= kPrefix.size() + 1 || !json->starts_with(kPrefix) ||
      json->back() != '}') {
    return bad();
  }
  std::string_view digits(json->data() + kPrefix.size(), json->size() - kPrefix.size() - 1);
  if (digits.empty() || digits.size() > 12) return bad();
  size_t offset = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return bad();
    offset = offset * 10 + static_cast<size_t>(c - '0');
  }
  return offset;
}

Result<Page<Run>> SearchRuns(std::vector<Run> runs, const RunSearchRequest& request) {
  if (request.max_results < 1 || request.max_results > kMaxSearchResults) {
    return InvalidArgument("max_results must be between 1 and " +
                           std::to_string(kMaxSearchResults) + ", got " +
                           std::to_string(request.max_results));
  }
  FERRY_ASSIGN_OR_RETURN(auto clauses, ParseFilter(request.filter));
  FERRY_ASSIGN_OR_RETURN(auto keys, ParseOrderBy(request.order_by));
  FERRY_ASSIGN_OR_RETURN(size_t offset, DecodePageToken(request.page_token));
  std::erase_if(runs, [&](const Run& r) { return !MatchesFilter(r, clauses); });
  SortRuns(runs, keys);
  Page<Run> page;
  size_t end = std::min(runs.size(), offset + static_cast<size_t>(request.max_results));
  for (size_t i = offset; i < end; ++i) page.items.push_back(std::move(runs[i]));
  if (end < runs.size()) page.next_page_token = EncodePageToken(end);
  return page;
}

}  // namespace ferry::tracker
