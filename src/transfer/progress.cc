#include "transfer/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "base/strings.h"

namespace ferry::transfer {

ProgressReporter::ProgressReporter(const ProgressCounters& counters, ProgressMode mode,
                                   std::FILE* out)
    : c_(counters), out_(out), start_(std::chrono::steady_clock::now()) {
  if (mode == ProgressMode::kNone) return;
  bar_ = mode == ProgressMode::kBar || (mode == ProgressMode::kAuto && ::isatty(fileno(out)));
  thread_ = std::thread([this] { Loop(); });
}

ProgressReporter::~ProgressReporter() { Stop(); }

void ProgressReporter::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (bar_) std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
}

std::string ProgressReporter::Line(bool bar) const {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  uint64_t done = c_.bytes_done, total = c_.bytes_total;
  double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
  std::string eta = "-";
  if (rate > 0 && total > done) {
    eta = fmt::format("{:.0f}s", static_cast<double>(total - done) / rate);
  }
  std::string files = fmt::format("{}/{} files", c_.files_done.load(), c_.files_total.load());
  if (c_.files_skipped) files += fmt::format(" ({} unchanged)", c_.files_skipped.load());
  if (c_.files_failed) files += fmt::format(" ({} failed)", c_.files_failed.load());
  std::string head;
  if (bar) {
    int width = 24;
    int filled =
        total ? static_cast<int>(width * std::min(1.0, static_cast<double>(done) / total)) : 0;
    head = "[" + std::string(filled, '=') + (filled < width ? ">" : "") +
           std::string(std::max(0, width - filled - 1), ' ') + "] ";
  } else {
    head = "ferry: progress: ";
  }
  return head + fmt::format("{} / {}  {}  {}/s  ETA {}", HumanBytes(done), HumanBytes(total), files,
                            HumanBytes(static_cast<uint64_t>(rate)), eta);
}

void ProgressReporter::Loop() {
  auto period = bar_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(10000);
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, period, [&] { return stop_; })) {
    if (bar_) {
      std::fprintf(out_, "\r\033[K%s", Line(true).c_str());
    } else {
      std::fprintf(out_, "%s\n", Line(false).c_str());
    }
    std::fflush(out_);
  }
}

void RateLimiter::Acquire(uint64_t bytes) {
  if (rate_ == 0) return;
  std::chrono::duration<double> wait{0};
  {
    std::lock_guard lock(mu_);
    auto now = std::chrono::steady_clock::now();
    double burst = static_cast<double>(rate_) / 4;
    tokens_ = std::min(burst, tokens_ + std::chrono::duration<double>(now - last_).count() *
                                            static_cast<double>(rate_));
    last_ = now;
    tokens_ -= static_cast<double>(bytes);
    if (tokens_ < 0) wait = std::chrono::duration<double>(-tokens_ / static_cast<double>(rate_));
  }
  if (wait.count() > 0) std::this_thread::sleep_for(wait);
}

}  // namespace ferry::transfer
