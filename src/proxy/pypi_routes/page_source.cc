#include "proxy/pypi_routes/page_source.h"

#include <functional>

#include "base/log.h"
#include "base/strings.h"
#include "proxy/pypi/simple_html.h"
#include "proxy/pypi/simple_json.h"

namespace ferry::proxy::pypi {

namespace {

struct Fetched {
  std::string body;
  std::string content_type;
  std::string url;  // the final URL, after redirects
};

Result<Fetched> FetchUpstream(PypiDeps& deps, const std::string& url) {
  UpstreamRequest req;
  req.url = url;
  req.headers.push_back({"Accept", std::string(kUpstreamAccept)});
  req.redirects = Redirects::kAll;
  Fetched f;
  f.url = url;
  auto sink = [&f, &url](std::string_view chunk) -> Status {
    if (f.body.size() + chunk.size() > kMaxPageBytes) {
      return Unavailable("GET '" + http::DisplayUrl(url) + "': index page larger than " +
                         HumanBytes(kMaxPageBytes));
    }
    f.body.append(chunk);
    return Status();
  };
  FERRY_ASSIGN_OR_RETURN(http::Response resp, deps.px->upstream->Send(req, sink, nullptr, &f.url));
  if (!resp.ok()) return UpstreamError("GET", f.url, resp);
  f.content_type = std::string(resp.Header("content-type").value_or(""));
  return f;
}

// A stored upstream 404: a document with no body and the "missing" field (its message).
bool IsMissing(const Doc& doc) { return doc.fields.contains("missing"); }
Status MissingStatus(const Doc& doc) {
  return Status(StatusCode::kNotFound, doc.fields.at("missing"));
}

template <typename T>
struct Sourced {
  T value;
  PageOrigin origin;
  int64_t fetched_ms;
};

template <typename T>
struct Codec {
  std::function<Result<T>(const Fetched&)> parse;  // an upstream answer
  std::function<std::string(const T&)> encode;     // to the stored form
  std::function<Result<T>(const Doc&)> decode;     // from the stored form
};

void Count(server::Counter* c) {
  if (c) c->Add();
}

// The cache rules of page_source.h for one document.
template <typename T>
Result<Sourced<T>> GetCached(PypiDeps& deps, std::string_view ns, std::string_view key,
                             const std::string& url, bool refresh, const Codec<T>& codec) {
  ProxyContext& px = *deps.px;
  const int64_t now = px.now_ms();
  std::optional<Doc> stored = px.docs->Get(ns, key);
  if (stored) {
    bool fresh = px.options.offline || (!refresh && stored->Age(now) < px.options.metadata_ttl);
    if (fresh && IsMissing(*stored)) {
      Count(deps.counters.hit);
      return MissingStatus(*stored);
    }
    if (fresh) {
      auto v = codec.decode(*stored);
      if (v.ok()) {
        Count(deps.counters.hit);
        return Sourced<T>{std::move(*v), PageOrigin::kFresh, stored->fetched_ms};
      }
      Log(LogLevel::kWarn, "pypi: stored page '{}' is unreadable, fetching it again: {}", key,
          v.status().message());
      stored.reset();
    }
  }
  if (px.options.offline) {
    return Unavailable("offline (--offline): the index page of '" + std::string(key) +
                       "' is not cached");
  }
  const std::string failure_key = std::string(ns) + "/" + std::string(key);
  auto stale = [&]() -> std::optional<Sourced<T>> {
    if (!stored || IsMissing(*stored)) return std::nullopt;
    auto v = codec.decode(*stored);
    if (!v.ok()) return std::nullopt;
    Count(deps.counters.stale);
    return Sourced<T>{std::move(*v), PageOrigin::kStale, stored->fetched_ms};
  };
  if (deps.failures.Active(failure_key, now)) {
    if (auto v = stale()) return std::move(*v);
  }
  // Concurrent misses: one fetch; the others take the page it stored (newer than theirs).
  // The leader looks again too: a flight that ended just before Join() stored its page.
  auto ticket = deps.page_flights.Join(failure_key, std::chrono::seconds(30));
  {
    std::optional<Doc> again = px.docs->Get(ns, key);
    if (again && again->fetched_ms > (stored ? stored->fetched_ms : 0)) {
      if (IsMissing(*again)) {
        Count(deps.counters.hit);
        return MissingStatus(*again);
      }
      if (auto v = codec.decode(*again); v.ok()) {
        Count(deps.counters.hit);
        return Sourced<T>{std::move(*v), PageOrigin::kFresh, again->fetched_ms};
      }
    }
  }
  auto fetched = FetchUpstream(deps, url);
  Result<T> parsed = fetched.ok() ? codec.parse(*fetched) : Result<T>(fetched.status());
  if (parsed.ok()) {
    deps.failures.Clear(failure_key);
    Doc doc{codec.encode(*parsed), {{"url", fetched->url}}, now};
    Status put = px.docs->Put(ns, key, std::move(doc));
    if (!put.ok()) Log(LogLevel::kWarn, "pypi: cannot store page '{}': {}", key, put.message());
    Count(deps.counters.miss);
    return Sourced<T>{std::move(*parsed), PageOrigin::kUpstream, now};
  }
  // Upstream's 404 is its true answer, kept for the TTL like a page: pip asks every index for
  // every project (--extra-index-url), so a warm machine must not ask again each time.
  if (parsed.status().code() == StatusCode::kNotFound) {
    deps.failures.Clear(failure_key);
    Doc doc{"", {{"missing", parsed.status().message()}}, now};
    Status put = px.docs->Put(ns, key, std::move(doc));
    if (!put.ok())
      Log(LogLevel::kWarn, "pypi: cannot store '{}' as missing: {}", key, put.message());
    Count(deps.counters.miss);
  } else {
    if (auto v = stale()) {
      Log(LogLevel::kWarn, "pypi: {}; serving the page stored {} s ago", parsed.status().message(),
          stored->Age(now).count() / 1000);
      deps.failures.Set(failure_key, px.now_ms() + kStaleRetryIntervalMs);
      return std::move(*v);
    }
  }
  return parsed.status();
}

std::string StoredUrl(const Doc& doc, const PypiDeps& deps) {
  auto it = doc.fields.find("url");
  return it != doc.fields.end() ? it->second : deps.upstream;
}

}  // namespace

Result<PageFormat> FormatOfContentType(std::string_view content_type) {
  std::string type = ToLower(Trim(content_type.substr(0, content_type.find(';'))));
  if (type.empty() || type == "text/html" || type == "application/vnd.pypi.simple.v1+html") {
    return PageFormat::kHtml;
  }
  if (type == "application/vnd.pypi.simple.v1+json") return PageFormat::kJson;
  if (StartsWith(type, "application/vnd.pypi.simple.")) {
    return InvalidArgument("upstream answered '" + type +
                           "', an API version this proxy does not know (PEP 629)");
  }
  return InvalidArgument("upstream answered '" + type + "', not an index page");
}

Result<SourcedPage> GetProjectPage(PypiDeps& deps, std::string_view project, bool refresh) {
  std::string name(project);
  Codec<ProjectPage> codec{
      .parse = [&name](const Fetched& f) -> Result<ProjectPage> {
        FERRY_ASSIGN_OR_RETURN(PageFormat format, FormatOfContentType(f.content_type));
        Result<ProjectPage> page = format == PageFormat::kJson
                                       ? ParseProjectJson(f.body, f.url)
                                       : ParseProjectHtml(f.body, f.url, name);
        if (!page.ok()) {
          return page.status().WithContext("upstream page '" + http::DisplayUrl(f.url) + "'");
        }
        for (const std::string& s : page->skipped) {
          Log(LogLevel::kDebug, "pypi: {}: link left out: {}", name, s);
        }
        return page;
      },
      .encode = [](const ProjectPage& p) { return RenderProjectJson(p); },
      .decode = [&deps](const Doc& d) { return ParseProjectJson(d.body, StoredUrl(d, deps)); },
  };
  FERRY_ASSIGN_OR_RETURN(
      auto got, GetCached<ProjectPage>(deps, kPageNamespace, deps.scope + std::string(project),
                                       deps.upstream + name + "/", refresh, codec));
  return SourcedPage{std::move(got.value), got.origin, got.fetched_ms};
}

Result<SourcedIndex> GetProjectIndex(PypiDeps& deps) {
  Codec<ProjectList> codec{
      .parse = [](const Fetched& f) -> Result<ProjectList> {
        FERRY_ASSIGN_OR_RETURN(PageFormat format, FormatOfContentType(f.content_type));
        Result<ProjectList> list =
            format == PageFormat::kJson ? ParseIndexJson(f.body) : ParseIndexHtml(f.body);
        if (!list.ok()) {
          return list.status().WithContext("upstream index '" + http::DisplayUrl(f.url) + "'");
        }
        return list;
      },
      .encode = [](const ProjectList& l) { return RenderIndexJson(l); },
      .decode = [](const Doc& d) { return ParseIndexJson(d.body); },
  };
  FERRY_ASSIGN_OR_RETURN(auto got, GetCached<ProjectList>(deps, kIndexNamespace, deps.scope + "/",
                                                          deps.upstream, false, codec));
  return SourcedIndex{std::move(got.value), got.origin, got.fetched_ms};
}

}  // namespace ferry::proxy::pypi
