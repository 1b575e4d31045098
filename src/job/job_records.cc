#include "job/job_records.h"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "job/run_plan.h"
#include "storage/url.h"

namespace ferry::job {

namespace {

// A job id as one key segment: what is not [A-Za-z0-9._-] becomes '_'.
std::string Segment(const std::string& job) {
  std::string s = job;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  }
  if (s.empty() || s == "." || s == "..") s = "_" + s;
  return s;
}

// Claims are "<N>.<token>.json"; N is 6+ digits. -1 for other names.
int ClaimNumber(std::string_view name) {
  size_t dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 9) return -1;
  int n = 0;
  for (char c : name.substr(0, dot)) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

Result<std::vector<std::string>> ClaimNames(storage::Store& store, const std::string& prefix) {
  std::vector<std::string> names;
  FERRY_RETURN_IF_ERROR(store.ListAll({.prefix = prefix}, [&](const storage::ListPage& page) {
    for (const auto& o : page.objects) names.push_back(o.key.substr(prefix.size()));
    return Status();
  }));
  return names;
}

}  // namespace

Result<std::string> JobRecordsKey(const std::string& tmpl, const RunIdentity& id) {
  FERRY_ASSIGN_OR_RETURN(auto parsed, storage::ParseUrl(tmpl));
  const std::string& key = parsed.key;
  // The part before the first field other than {job}, cut after a '/'.
  size_t cut = std::string::npos;
  for (size_t pos = key.find('{'); pos != std::string::npos; pos = key.find('{', pos + 1)) {
    size_t close = key.find('}', pos);
    if (close == std::string::npos) return InvalidArgument("unclosed '{' in '" + tmpl + "'");
    if (key.compare(pos, close - pos + 1, "{job}") != 0) {
      cut = pos;
      break;
    }
  }
  std::string head;
  if (cut == std::string::npos) {
    head = storage::DirectoryPrefix(key);
  } else {
    size_t slash = key.rfind('/', cut);
    head = slash == std::string::npos ? "" : key.substr(0, slash + 1);
  }
  FERRY_ASSIGN_OR_RETURN(std::string expanded, ExpandTemplate(head, id));
  if (head.find("{job}") != std::string::npos) return expanded + "_ferry/";
  return expanded + "_ferry/jobs/" + Segment(id.job) + "/";
}

std::string LatestPointerName(const std::string& rank, size_t output) {
  return "latest" + (output == 0 ? std::string() : "-out" + std::to_string(output)) +
         (rank == "0" ? std::string() : "-rank" + rank) + ".json";
}

std::string ManifestName(const std::string& rank) {
  return rank == "0" ? "manifest.json" : "manifest-rank" + rank + ".json";
}

Result<int> ClaimAttempt(storage::Store& store, const std::string& records_key,
                         const std::string& rank, const AttemptClaimOptions& options) {
  const std::string prefix = records_key + "attempts/rank" + rank + "/";
  auto where = [&] { return "counting attempts at '" + store.UrlFor(prefix) + "'"; };
  for (int attempt_try = 0; attempt_try < options.max_tries; ++attempt_try) {
    auto names = ClaimNames(store, prefix);
    if (!names.ok()) return names.status().WithContext(where());
    int highest = -1;
    for (const auto& n : *names) highest = std::max(highest, ClaimNumber(n));
    const int n = highest + 1;
    const std::string number = fmt::format("{:06d}.", n);
    FERRY_RETURN_IF_ERROR(store.WriteAll(prefix + number + options.token + ".json", options.details)
                              .status()
                              .WithContext(where()));
    // Held only when this claim is the only one for N: a run that wrote its claim before ours
    // and listed after it sees ours too and moves on as well.
    auto rivals = ClaimNames(store, prefix + number);
    if (!rivals.ok()) return rivals.status().WithContext(where());
    if (rivals->size() == 1) return n;
    if (options.back_off) options.back_off(attempt_try);
  }
  return Status(StatusCode::kFailedPrecondition,
                where() + ": lost the race for an attempt number " +
                    std::to_string(options.max_tries) + " times (many runs of one job starting?)");
}

}  // namespace ferry::job
