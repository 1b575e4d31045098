#include "transfer/resume_plan.h"

#include <algorithm>

#include "base/log.h"

namespace ferry::transfer {

namespace {

// How far the destination's clock may lag ours when a killed run's leftovers are looked for by
// time (S3 itself refuses requests signed more than 15 minutes off).
constexpr auto kClockSkewAllowance = std::chrono::minutes(5);

// Errors after which the destination has certainly not begun a write.
bool IsRefusal(StatusCode code) {
  switch (code) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kCancelled:
    case StatusCode::kInternal:
      return false;
    default:
      return true;
  }
}

// Bytes of the parts in `done` for an object of `size` in parts of `part_size`.
uint64_t PartBytes(const std::map<int, uint32_t>& done, uint64_t size, uint64_t part_size) {
  uint64_t bytes = 0;
  for (const auto& [n, crc] : done) {
    uint64_t offset = part_size * static_cast<uint64_t>(n - 1);
    bytes += offset < size ? std::min(part_size, size - offset) : 0;
  }
  return bytes;
}

// Keeps the parts of `done` that the destination still holds intact.
void KeepStoredParts(storage::PartWriter& writer, uint64_t size, uint64_t part_size,
                     std::map<int, uint32_t>& done) {
  auto stored = writer.StoredParts();
  if (stored.ok() && !stored->empty()) {
    std::erase_if(done, [&](const auto& p) { return !stored->contains(p.first); });
  }
  // Where the destination can read unfinished parts back, trust data, not the journal.
  std::erase_if(done, [&](const auto& p) {
    uint64_t offset = part_size * static_cast<uint64_t>(p.first - 1);
    if (offset >= size) return true;
    auto crc = writer.StoredCrc32c(offset, std::min(part_size, size - offset));
    return crc.ok() ? *crc != p.second : crc.status().code() != StatusCode::kUnimplemented;
  });
}

}  // namespace

Result<ResumePlan> PlanResume(const ResumeRequest& request) {
  storage::Store& dst = *request.dst;
  const std::string dst_url = dst.UrlFor(request.dst_key);
  // Parts of an unfinished copy that cannot be resumed are removed (S3: the multipart upload is
  // aborted; local: the temporary file is deleted), so nothing is left behind for good.
  auto discard = [&](const std::string& token, std::string_view why) {
    if (token.empty()) return;
    Status d = dst.AbortPartWrite(request.dst_key, token);
    Log(d.ok() ? LogLevel::kInfo : LogLevel::kWarn, "discarding the unfinished copy to '{}' ({}){}",
        dst_url, why, d.ok() ? "" : ": " + d.message());
  };
  // A journal without a token: the run was killed after its intent, perhaps after the
  // destination began the write. What the destination began since then has no owner left.
  auto discard_since = [&](const Journal::Loaded& j) {
    if (!j.started) return;  // a version 1 journal: no time to go by
    auto n = dst.AbortPartWritesSince(request.dst_key, *j.started - kClockSkewAllowance);
    if (!n.ok()) {
      Log(LogLevel::kWarn, "cannot discard the unfinished copies to '{}' of a killed run: {}",
          dst_url, n.status().message());
    } else if (*n > 0) {
      Log(LogLevel::kInfo, "discarded {} unfinished cop{} to '{}' left by a killed run", *n,
          *n == 1 ? "y" : "ies", dst_url);
    }
  };

  ResumePlan plan;
  storage::PartWriteOptions write = request.write;
  auto loaded = Journal::Load(request.journal_path, request.header);
  bool resumable = false;
  if (loaded) {
    if (loaded->token.empty()) {
      discard_since(*loaded);
    } else if (!loaded->matches) {
      discard(loaded->token, "the source changed since");
    } else {
      resumable = true;
    }
  }
  if (resumable) {
    write.resume_token = loaded->token;
    auto w = dst.NewPartWriter(request.dst_key, write);
    if (w.ok()) {
      plan.writer = std::move(*w);
      plan.done = std::move(loaded->parts);
      KeepStoredParts(*plan.writer, write.size, write.part_size, plan.done);
      auto j = Journal::Append(request.journal_path);
      if (j.ok()) plan.journal = std::move(*j);
    } else {
      Log(LogLevel::kInfo, "cannot resume '{}' ({}); starting over", dst_url, w.status().message());
      discard(loaded->token, "it cannot be resumed");
    }
  }
  if (!plan.writer) {
    plan.done.clear();
    write.resume_token.clear();
    // The intent first (a header with the time and no token), then the write, then its token.
    JournalHeader header = request.header;
    header.token.clear();
    header.started = std::chrono::system_clock::now();
    auto j = Journal::Create(request.journal_path, header);
    auto writer = dst.NewPartWriter(request.dst_key, write);
    if (!writer.ok()) {
      // A refusal (bad name, access denied) made nothing; after a timeout or a lost answer the
      // destination may have begun the write, and the intent stays for the next run to clean.
      if (j.ok() && IsRefusal(writer.status().code())) (*j)->Remove();
      return writer.status();
    }
    plan.writer = std::move(*writer);
    Status recorded = j.ok() ? (*j)->SetToken(plan.writer->resume_token()) : j.status();
    if (!recorded.ok()) {
      Log(LogLevel::kWarn, "no resume journal for '{}': {}", dst_url, recorded.message());
    } else {
      plan.journal = std::move(*j);
    }
  }
  plan.resumed_bytes = PartBytes(plan.done, write.size, write.part_size);
  return plan;
}

}  // namespace ferry::transfer
