#include "base/log.h"

#include <atomic>
#include <cstdio>
#include "base/mutex.h"
#include "base/redact.h"

namespace ferry {

namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
Mutex g_write_mu;  // one line at a time on stderr
constexpr const char* kNames[] = {"error", "warn", "info", "debug", "trace"};
}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }
bool LogEnabled(LogLevel level) { return static_cast<int>(level) <= g_level.load(); }

void LogLine(LogLevel level, std::string_view message) {
  std::string line = "ferry: " + std::string(kNames[static_cast<int>(level)]) + ": ";
  line += Redact(message);
  if (line.empty() || line.back() != '\n') line.push_back('\n');
  MutexLock lock(g_write_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace ferry
