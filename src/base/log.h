#pragma once
// Process logger: one line per event on stderr, every line passed through Redact().

#include <fmt/format.h>

#include <string_view>

namespace ferry {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, std::string_view message);

template <typename... Args>
void Log(LogLevel level, fmt::format_string<Args...> f, Args&&... args) {
  if (!LogEnabled(level)) return;
  LogLine(level, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace ferry
