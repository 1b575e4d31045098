#pragma once
// Read access to environment variables behind an interface, so configuration code (credential
// chain, endpoint resolution) is tested with a map instead of the process environment.

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ferry {

class Environment {
 public:
  virtual ~Environment() = default;
  // The variable's value; nullopt when unset. An empty value counts as unset.
  virtual std::optional<std::string> Get(std::string_view name) const = 0;
  std::string GetOr(std::string_view name, std::string_view fallback) const {
    auto v = Get(name);
    return v ? *v : std::string(fallback);
  }
};

// The real process environment (getenv).
class ProcessEnvironment final : public Environment {
 public:
  std::optional<std::string> Get(std::string_view name) const override;
};

class MapEnvironment final : public Environment {
 public:
  MapEnvironment() = default;
  explicit MapEnvironment(std::map<std::string, std::string, std::less<>> vars)
      : vars_(std::move(vars)) {}
  void Set(std::string name, std::string value) { vars_[std::move(name)] = std::move(value); }
  std::optional<std::string> Get(std::string_view name) const override;

 private:
  std::map<std::string, std::string, std::less<>> vars_;
};

}  // namespace ferry
