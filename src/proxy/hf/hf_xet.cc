#include "proxy/hf/hf_xet.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/strings.h"
#include "proxy/hf/hf_service.h"

namespace ferry::proxy::hf {

namespace {

bool StartsWithXet(std::string_view s) {
  return s.size() >= 3 && (s[0] | 0x20) == 'x' && (s[1] | 0x20) == 'e' && (s[2] | 0x20) == 't';
}

bool MentionsXet(std::string_view text) {
  for (size_t i = 0; i + 3 <= text.size(); ++i) {
    if (StartsWithXet(text.substr(i, 3))) return true;
  }
  return false;
}

// Removes Xet members in place; true when one was removed.
bool Strip(nlohmann::json& j) {
  bool changed = false;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (StartsWithXet(it.key())) {
        it = j.erase(it);
        changed = true;
      } else {
        changed |= Strip(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& item : j) changed |= Strip(item);
  }
  return changed;
}

}  // namespace

std::string WithoutXetFields(std::string_view body) {
  if (!MentionsXet(body)) return std::string(body);
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !Strip(j)) return std::string(body);
  return JsonText(j);
}

bool IsXetTokenTail(std::string_view tail) {
  return tail.starts_with("xet-") && tail.find("-token") != std::string_view::npos;
}

server::Response XetTokenRefusal(std::string_view repo_key) {
  return HubError(403, "XetNotServed",
                  "ferry serve does not hand out Xet tokens for " + std::string(repo_key) +
                      ": its /hf serves files over HTTP through the cache. A client asks for one "
                      "when its own cache holds a tree listing fetched from huggingface.co itself "
                      "(trees/<commit>.json naming Xet hashes): delete that file or set "
                      "HF_HUB_DISABLE_XET=1 for this client");
}

}  // namespace ferry::proxy::hf
