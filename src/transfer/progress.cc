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
    MutexLock lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  if (bar_) std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
}

std::string EtaText(uint64_t done, uint64_t total, double recent_rate, double stalled_seconds,
                    bool listing_done) {
  if (stalled_seconds >= 5 && done < total) return fmt::format("stalled {:.0f}s", stalled_seconds);
  if (!listing_done) return "listing";
  if (recent_rate <= 0 || total <= done) return "-";
  return fmt::format("{:.0f}s", static_cast<double>(total - done) / recent_rate);
}

void ProgressReporter::Sample() {
  auto now = std::chrono::steady_clock::now();
  uint64_t done = c_.bytes_done;
  if (done != last_done_ || samples_.empty()) {
    last_done_ = done;
    last_progress_ = now;
  }
  samples_.emplace_back(now, done);
  while (samples_.size() > 2 && now - samples_.front().first > std::chrono::seconds(10)) {
    samples_.pop_front();
  }
}

std::string ProgressReporter::Line(bool bar) {
  auto now = std::chrono::steady_clock::now();
  double secs = std::chrono::duration<double>(now - start_).count();
  uint64_t done = c_.bytes_done, total = c_.bytes_total;
  double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
  double recent = rate;
  if (samples_.size() >= 2) {
    double dt =
        std::chrono::duration<double>(samples_.back().first - samples_.front().first).count();
    uint64_t moved =
        samples_.back().second - std::min(samples_.back().second, samples_.front().second);
    if (dt >= 1) recent = static_cast<double>(moved) / dt;
  }
  double stalled =
      samples_.empty() ? 0 : std::chrono::duration<double>(now - last_progress_).count();
  bool listed = c_.listing_done;
  std::string eta = EtaText(done, total, recent, stalled, listed);
  std::string files =
      fmt::format("{}/{}{} files", c_.files_done.load(), c_.files_total.load(), listed ? "" : "+");
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
  return head + fmt::format("{} / {}{}  {}  {}/s  ETA {}", HumanBytes(done), HumanBytes(total),
                            listed ? "" : "+", files, HumanBytes(static_cast<uint64_t>(recent)),
                            eta);
}

void ProgressReporter::Loop() {
  // Samples every 200 ms (the rate and stall detection need them); draws a bar as often, or a
  // line every 10 s.
  constexpr auto kTick = std::chrono::milliseconds(200);
  auto period = bar_ ? kTick : std::chrono::milliseconds(10000);
  auto next_draw = std::chrono::steady_clock::now() + period;
  MutexLock lock(mu_);
  while (!cv_.WaitFor(lock, kTick, [&]() REQUIRES(mu_) { return stop_; })) {
    Sample();
    if (std::chrono::steady_clock::now() < next_draw) continue;
    next_draw += period;
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
    MutexLock lock(mu_);
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
