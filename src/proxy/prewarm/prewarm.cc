#include "proxy/prewarm/prewarm.h"

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "base/strings.h"
#include "base/thread_pool.h"
#include "http/http_client.h"
#include "proxy/prewarm/requirements.h"
#include "proxy/pypi/simple_json.h"

namespace ferry::proxy::prewarm {

namespace {

struct Job {
  std::string path;   // below the server, e.g. "/hf/org/m/resolve/main/x"
  std::string label;  // for progress lines
};

class Runner {
 public:
  explicit Runner(const PrewarmOptions& o)
      : o_(o), client_([&] {
          http::ClientOptions c;
          c.cancel = o.cancel;
          return c;
        }()) {}

  http::Headers Headers(bool json) const {
    http::Headers h;
    if (!o_.hf_token.empty()) h.push_back({"Authorization", "Bearer " + o_.hf_token});
    if (json) h.push_back({"Accept", "application/vnd.pypi.simple.v1+json, application/json"});
    return h;
  }

  // GET of a small document (a listing): its body, or an error Status.
  Result<std::string> GetDocument(const std::string& path) {
    auto resp = client_.Send({.method = "GET", .url = o_.server + path, .headers = Headers(true)});
    if (!resp.ok()) return resp.status();
    if (!resp->ok()) {
      return Status(StatusCode::kUnavailable, "GET " + path + ": HTTP " +
                                                  std::to_string(resp->status) + " " +
                                                  std::string(Trim(resp->body.substr(0, 200))));
    }
    return std::move(resp->body);
  }

  void Fetch(const Job& job) {
    if (o_.cancel && o_.cancel->load()) return;
    uint64_t got = 0;
    std::optional<uint64_t> expected;
    auto resp = client_.Send(
        {.method = "GET",
         .url = o_.server + job.path,
         .headers = Headers(false),
         .data_transfer = true},
        [&](std::string_view chunk) {
          got += chunk.size();
          return Status();
        },
        [&](const http::Response& r) {
          if (auto cl = r.Header("content-length")) expected = ParseUint64(*cl);
          return Status();
        });
    std::string line;
    bool ok = resp.ok() && resp->ok() && (!expected || *expected == got);
    if (ok) {
      line = "ok " + job.label + " (" + std::to_string(got) + " bytes)";
    } else if (!resp.ok()) {
      line = "FAILED " + job.label + ": " + resp.status().message();
    } else if (!resp->ok()) {
      line = "FAILED " + job.label + ": HTTP " + std::to_string(resp->status) + " " +
             std::string(Trim(resp->body.substr(0, 200)));
    } else {
      line = "FAILED " + job.label + ": body ended after " + std::to_string(got) + " bytes";
    }
    MutexLock lock(mu_);
    if (ok) {
      report_.files++;
      report_.bytes += got;
    } else {
      report_.failed++;
    }
    if (o_.progress) o_.progress(line);
  }

  void Fail(const std::string& line) {
    MutexLock lock(mu_);
    report_.failed++;
    if (o_.progress) o_.progress("FAILED " + line);
  }
  void Say(const std::string& line) {
    MutexLock lock(mu_);
    if (o_.progress) o_.progress(line);
  }

  PrewarmReport report() {
    MutexLock lock(mu_);
    return report_;
  }

 private:
  const PrewarmOptions& o_;
  http::Client client_;
  Mutex mu_;
  PrewarmReport report_ GUARDED_BY(mu_);
};

// "org/name@rev" -> API path and resolve prefix.
struct RepoSpec {
  std::string kind = "models";
  std::string id, rev = "main";
};

Result<RepoSpec> ParseRepoSpec(std::string_view spec) {
  RepoSpec r;
  std::string_view s = spec;
  if (size_t at = s.find('@'); at != std::string_view::npos) {
    r.rev = std::string(s.substr(at + 1));
    s = s.substr(0, at);
  }
  for (std::string_view kind : {"datasets/", "spaces/", "models/"}) {
    if (s.starts_with(kind)) {
      r.kind = std::string(kind.substr(0, kind.size() - 1));
      s.remove_prefix(kind.size());
    }
  }
  r.id = std::string(s);
  bool ok = !r.id.empty() && !r.rev.empty() && r.id.find("..") == std::string::npos &&
            std::count(r.id.begin(), r.id.end(), '/') <= 1 && r.rev.find('/') == std::string::npos;
  if (!ok) return InvalidArgument("prewarm: '" + std::string(spec) + "' is not ORG/NAME[@REV]");
  return r;
}

bool KeepFile(const std::string& filename, const std::vector<std::string>& filters) {
  if (filters.empty() || !filename.ends_with(".whl") || filename.ends_with("-none-any.whl")) {
    return true;
  }
  for (const auto& f : filters) {
    if (filename.find(f) != std::string::npos) return true;
  }
  return false;
}

void AddHfJobs(Runner& run, const RepoSpec& r, std::vector<Job>* jobs) {
  std::string api = "/hf/api/" + r.kind + "/" + r.id + "/revision/" + PercentEncode(r.rev);
  auto body = run.GetDocument(api);
  if (!body.ok())
    return run.Fail(r.kind + "/" + r.id + "@" + r.rev + ": " + body.status().message());
  auto info = nlohmann::json::parse(*body, nullptr, false);
  if (!info.is_object() || !info.contains("siblings") || !info["siblings"].is_array()) {
    return run.Fail(r.kind + "/" + r.id + ": the API answer has no file list");
  }
  std::string prefix = r.kind == "models" ? "" : r.kind + "/";
  for (const auto& s : info["siblings"]) {
    if (!s.is_object() || !s.contains("rfilename") || !s["rfilename"].is_string()) continue;
    std::string file = s["rfilename"].get<std::string>();
    jobs->push_back({"/hf/" + prefix + r.id + "/resolve/" + PercentEncode(r.rev) + "/" +
                         PercentEncode(file, /*keep_slash=*/true),
                     r.kind + "/" + r.id + "@" + r.rev + ": " + file});
  }
}

void AddPypiJobs(Runner& run, const PrewarmOptions& o, const Requirement& req,
                 std::vector<Job>* jobs) {
  std::string page_path = "/pypi/simple/" + req.project + "/";
  auto body = run.GetDocument(page_path);
  if (!body.ok()) return run.Fail(req.project + ": " + body.status().message());
  auto page = pypi::ParseProjectJson(*body, o.server + page_path);
  if (!page.ok()) return run.Fail(req.project + ": " + page.status().message());
  std::string version = req.version;
  if (version.empty()) {  // the newest: the last version with a file that is not yanked
    for (const auto& f : page->files) {
      auto v = VersionOfFilename(f.filename);
      if (v && !f.yanked.yanked) version = *v;
    }
  }
  int added = 0;
  for (const auto& f : page->files) {
    auto v = VersionOfFilename(f.filename);
    if (!v || *v != version || !KeepFile(f.filename, o.wheel_filters)) continue;
    if (!f.url.starts_with(o.server + "/")) continue;  // only the proxy's own links
    std::string path = f.url.substr(o.server.size());
    jobs->push_back({path, req.project + " " + f.filename});
    if (f.core_metadata.available)
      jobs->push_back({path + ".metadata", req.project + " " + f.filename + ".metadata"});
    ++added;
  }
  if (added == 0) {
    run.Fail(req.project + (req.version.empty() ? "" : "==" + req.version) + " (line " +
             std::to_string(req.line) + "): no matching file on the index");
  }
}

}  // namespace

Result<PrewarmReport> Prewarm(const PrewarmOptions& o) {
  if (!(o.server.starts_with("http://") || o.server.starts_with("https://")) ||
      o.server.ends_with("/")) {
    return InvalidArgument("prewarm: --server '" + o.server + "' is not http(s)://HOST:PORT");
  }
  std::vector<RepoSpec> repos;
  for (const auto& spec : o.hf_repos) {
    FERRY_ASSIGN_OR_RETURN(auto r, ParseRepoSpec(spec));
    repos.push_back(std::move(r));
  }
  Runner run(o);
  std::vector<Job> jobs;
  for (const auto& r : repos) AddHfJobs(run, r, &jobs);
  std::vector<std::string> skipped;
  for (const auto& req : ParseRequirements(o.requirements, &skipped))
    AddPypiJobs(run, o, req, &jobs);
  for (const auto& s : skipped) run.Say("skipped " + s);
  {
    ThreadPool pool(std::max(1, std::min(o.parallel, 64)));
    for (const auto& job : jobs) pool.Submit([&run, job] { run.Fetch(job); });
    pool.WaitIdle();
  }
  return run.report();
}

}  // namespace ferry::proxy::prewarm
