#include "server/metrics.h"

#include <cstdio>
#include <cstdlib>

namespace ferry::server {

namespace {

bool ValidName(const std::string& s, bool allow_colon) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (allow_colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "ferry: metrics: %s\n", what.c_str());
    std::abort();
  }
}

// Escapes a label value: backslash, double quote and newline (the exposition format's rule).
std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string EscapeHelp(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

}  // namespace

MetricsRegistry::Family& MetricsRegistry::FamilyFor(const std::string& name,
                                                    const std::string& help, bool is_counter,
                                                    const Labels& labels) {
  Check(ValidName(name, true), "invalid metric name '" + name + "'");
  for (const auto& [k, v] : labels) Check(ValidName(k, false), "invalid label name '" + k + "'");
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) {
    it->second.is_counter = is_counter;
    it->second.help = help;
  }
  Check(it->second.is_counter == is_counter, "metric '" + name + "' used as counter and gauge");
  return it->second;
}

Counter& MetricsRegistry::GetCounter(const std::string& name, const std::string& help,
                                     const Labels& labels) {
  MutexLock lock(mu_);
  Family& f = FamilyFor(name, help, true, labels);
  for (auto& [l, p] : f.series) {
    if (l == labels) return *const_cast<Counter*>(static_cast<const Counter*>(p));
  }
  Counter& c = counters_.emplace_back();
  f.series.emplace_back(labels, &c);
  return c;
}

Gauge& MetricsRegistry::GetGauge(const std::string& name, const std::string& help,
                                 const Labels& labels) {
  MutexLock lock(mu_);
  Family& f = FamilyFor(name, help, false, labels);
  for (auto& [l, p] : f.series) {
    if (l == labels) return *const_cast<Gauge*>(static_cast<const Gauge*>(p));
  }
  Gauge& g = gauges_.emplace_back();
  f.series.emplace_back(labels, &g);
  return g;
}

void MetricsRegistry::AddCollector(std::function<void(MetricsRegistry&)> collect) {
  MutexLock lock(mu_);
  collectors_.push_back(std::move(collect));
}

std::string MetricsRegistry::RenderPrometheus() {
  std::vector<std::function<void(MetricsRegistry&)>> collectors;
  {
    MutexLock lock(mu_);
    collectors = collectors_;
  }
  for (const auto& collect : collectors) collect(*this);
  MutexLock lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += "# HELP " + name + " " + EscapeHelp(f.help) + "\n";
    out += "# TYPE " + name + (f.is_counter ? " counter\n" : " gauge\n");
    for (const auto& [labels, p] : f.series) {
      out += name;
      if (!labels.empty()) {
        out += '{';
        for (size_t i = 0; i < labels.size(); ++i) {
          if (i > 0) out += ',';
          out += labels[i].first + "=\"" + Escape(labels[i].second) + "\"";
        }
        out += '}';
      }
      out += ' ';
      out += f.is_counter ? std::to_string(static_cast<const Counter*>(p)->value())
                          : std::to_string(static_cast<const Gauge*>(p)->value());
      out += '\n';
    }
  }
  return out;
}

}  // namespace ferry::server
