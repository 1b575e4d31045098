#include "base/environment.h"

#include <cstdlib>

namespace ferry {

std::optional<std::string> ProcessEnvironment::Get(std::string_view name) const {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::optional<std::string> MapEnvironment::Get(std::string_view name) const {
  auto it = vars_.find(name);
  if (it == vars_.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

}  // namespace ferry
