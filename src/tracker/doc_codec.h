#pragma once
// How the document-kept entities (tracker/logged_models.h, tracker/registry.h) store their
// key/value lists: as one JSON object (keys unique and sorted, as nlohmann keeps them), and how a
// list sorted by key takes one more pair.

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracker/model.h"

namespace ferry::tracker::doc {

inline nlohmann::json PairsJson(const std::vector<Tag>& v) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& t : v) out[t.key] = t.value;
  return out;
}

// The pairs of PairsJson's object, by key; throws nlohmann::json::exception on a damaged one.
inline std::vector<Tag> PairsFrom(const nlohmann::json& j) {
  std::vector<Tag> out;
  for (const auto& [k, v] : j.items()) out.push_back({k, v.get<std::string>()});
  return out;
}

// Sets t.key to t.value in `v` (sorted by key), keeping it sorted.
inline void SetPair(std::vector<Tag>& v, const Tag& t) {
  auto it = std::lower_bound(v.begin(), v.end(), t.key,
                             [](const Tag& a, const std::string& k) { return a.key < k; });
  if (it != v.end() && it->key == t.key) {
    it->value = t.value;
  } else {
    v.insert(it, t);
  }
}

}  // namespace ferry::tracker::doc
