#include "tracker/artifacts/artifact_routes.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/strings.h"
#include "tracker/artifacts/artifact_download.h"
#include "tracker/artifacts/artifact_path.h"
#include "tracker/wire/mlflow_wire.h"

namespace ferry::tracker::artifacts {

namespace {

using server::Request;
using server::Response;

// The JSON object of a POST body ({} when empty); InvalidArgument otherwise.
Result<nlohmann::json> Body(const Request& req) {
  if (req.body.empty()) return nlohmann::json::object();
  auto j = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("the request body is not a JSON object");
  return j;
}

// The artifact path of the route's {path...}; a valid one, or InvalidArgument.
Result<std::string> PathParam(const Request& req) {
  return CleanArtifactPath(req.Param("path").value_or(""));
}

// Where a client sends part `n`: this server, as the client reached it; https when a TLS
// reverse proxy says so (X-Forwarded-Proto, docs/guides/deploy-on-a-nas.md). The header only
// changes the URL handed back to the same client, so a client that forges it fools itself.
std::string PartUrl(const Request& req, const std::string& upload_id, int n) {
  std::string path =
      std::string(kArtifactsPrefix) + "/mpu/part/" + upload_id + "/" + std::to_string(n);
  auto host = req.headers.Get("Host");
  if (!host || host->empty()) return path;
  auto proto = req.headers.Get("X-Forwarded-Proto");
  const char* scheme = proto && EqualsIgnoreCase(Trim(*proto), "https") ? "https://" : "http://";
  return scheme + std::string(*host) + path;
}

nlohmann::json PartsJson(const std::vector<PartInfo>& parts) {
  nlohmann::json a = nlohmann::json::array();
  for (const PartInfo& p : parts) {
    a.push_back({{"part_number", p.number}, {"size", p.size}, {"etag", p.etag}});
  }
  return a;
}

Result<std::vector<PartInfo>> PartsFromJson(const nlohmann::json& body) {
  std::vector<PartInfo> parts;
  if (!body.contains("parts")) return parts;
  if (!body["parts"].is_array()) return InvalidArgument("'parts' must be a list");
  for (const auto& p : body["parts"]) {
    if (!p.is_object() || !p.contains("part_number") || !p["part_number"].is_number_integer()) {
      return InvalidArgument("each part needs an integer part_number");
    }
    PartInfo info;
    info.number = p["part_number"].get<int>();
    if (p.contains("etag") && p["etag"].is_string()) info.etag = p["etag"].get<std::string>();
    parts.push_back(std::move(info));
  }
  return parts;
}

Result<std::string> UploadIdFrom(const nlohmann::json& body) {
  if (!body.contains("upload_id") || !body["upload_id"].is_string()) {
    return InvalidArgument("'upload_id' is required");
  }
  return body["upload_id"].get<std::string>();
}

Result<nlohmann::json> Upload(const Request& req, ArtifactService& svc) {
  FERRY_ASSIGN_OR_RETURN(std::string path, PathParam(req));
  if (!req.body_stream) return Internal("upload route without a streaming body");
  FERRY_ASSIGN_OR_RETURN(auto checks, ChecksFromHeaders(req));
  if (svc.observer) svc.observer->Started(path);
  Status put = svc.repo.Put(path, *req.body_stream, checks).status();
  if (svc.observer) svc.observer->Finished(path, put.ok());
  FERRY_RETURN_IF_ERROR(put);
  return nlohmann::json::object();
}

Result<nlohmann::json> List(const Request& req, ArtifactService& svc) {
  FERRY_ASSIGN_OR_RETURN(auto entries, svc.repo.List(req.Query("path").value_or("")));
  nlohmann::json files = nlohmann::json::array();
  for (const ArtifactEntry& e : entries) {
    nlohmann::json f{{"path", e.path}, {"is_dir", e.is_dir}};
    if (!e.is_dir) f["file_size"] = e.file_size;
    files.push_back(std::move(f));
  }
  nlohmann::json out = nlohmann::json::object();
  if (!files.empty()) out["files"] = std::move(files);  // MLflow omits an empty list
  return out;
}

Result<nlohmann::json> Delete(const Request& req, ArtifactService& svc) {
  FERRY_ASSIGN_OR_RETURN(std::string path, PathParam(req));
  FERRY_RETURN_IF_ERROR(svc.repo.Delete(path));
  return nlohmann::json::object();
}

Result<nlohmann::json> MpuCreate(const Request& req, ArtifactService& svc) {
  FERRY_ASSIGN_OR_RETURN(std::string path, PathParam(req));
  FERRY_ASSIGN_OR_RETURN(nlohmann::json j, Body(req));
  MultipartPlan plan;
  plan.path = path;
  if (!j.contains("num_parts") || !j["num_parts"].is_number_integer()) {
    return InvalidArgument("'num_parts' (an integer) is required");
  }
  plan.num_parts = j["num_parts"].get<int>();
  for (const char* name : {"size", "part_size"}) {
    if (!j.contains(name)) continue;
    if (!j[name].is_number_unsigned()) {
      return InvalidArgument(std::string("'") + name + "' must be a byte count");
    }
    (std::string_view(name) == "size" ? plan.size : plan.part_size) = j[name].get<uint64_t>();
  }
  FERRY_ASSIGN_OR_RETURN(auto up, svc.uploads.Create(plan));
  if (svc.observer) svc.observer->Started(up.path);
  nlohmann::json creds = nlohmann::json::array();
  for (int n = 1; n <= up.num_parts; ++n) {
    creds.push_back({{"part_number", n},
                     {"url", PartUrl(req, up.upload_id, n)},
                     {"headers", nlohmann::json::object()}});
  }
  return nlohmann::json{{"upload_id", up.upload_id}, {"credentials", creds}, {"direct", up.direct}};
}

Result<nlohmann::json> MpuDescribe(const Request& req, ArtifactService& svc) {
  FERRY_ASSIGN_OR_RETURN(auto up, svc.uploads.Describe(req.Param("upload_id").value_or("")));
  return nlohmann::json{{"upload_id", up.upload_id},
                        {"path", up.path},
                        {"num_parts", up.num_parts},
                        {"direct", up.direct},
                        {"parts", PartsJson(up.parts)}};
}

Result<nlohmann::json> MpuComplete(const Request& req, ArtifactService& svc) {
  FERRY_ASSIGN_OR_RETURN(std::string path, PathParam(req));
  FERRY_ASSIGN_OR_RETURN(nlohmann::json body, Body(req));
  FERRY_ASSIGN_OR_RETURN(std::string id, UploadIdFrom(body));
  FERRY_ASSIGN_OR_RETURN(auto parts, PartsFromJson(body));
  FERRY_RETURN_IF_ERROR(svc.uploads.Complete(path, id, parts).status());
  if (svc.observer) svc.observer->Finished(path, true);
  return nlohmann::json::object();
}

Result<nlohmann::json> MpuAbort(const Request& req, ArtifactService& svc) {
  FERRY_ASSIGN_OR_RETURN(std::string path, PathParam(req));
  FERRY_ASSIGN_OR_RETURN(nlohmann::json body, Body(req));
  FERRY_ASSIGN_OR_RETURN(std::string id, UploadIdFrom(body));
  FERRY_RETURN_IF_ERROR(svc.uploads.Abort(path, id));
  if (svc.observer) svc.observer->Finished(path, false);
  return nlohmann::json::object();
}

}  // namespace

Response HandleUpload(const Request& req, ArtifactService& svc) {
  return wire::Respond(Upload(req, svc));
}
Response HandleList(const Request& req, ArtifactService& svc) {
  return wire::Respond(List(req, svc));
}
Response HandleDelete(const Request& req, ArtifactService& svc) {
  return wire::Respond(Delete(req, svc));
}
Response HandleMpuCreate(const Request& req, ArtifactService& svc) {
  return wire::Respond(MpuCreate(req, svc));
}
Response HandleMpuDescribe(const Request& req, ArtifactService& svc) {
  return wire::Respond(MpuDescribe(req, svc));
}
Response HandleMpuComplete(const Request& req, ArtifactService& svc) {
  return wire::Respond(MpuComplete(req, svc));
}
Response HandleMpuAbort(const Request& req, ArtifactService& svc) {
  return wire::Respond(MpuAbort(req, svc));
}

Response HandleDownload(const Request& req, ArtifactService& svc) {
  auto path = PathParam(req);
  if (!path.ok()) return wire::Error(path.status());
  Response r = ServeObject(svc.repo.shared_store(), JoinKey(svc.repo.root_key(), *path), req);
  if (r.status == 404) return wire::Error(NotFound("artifact '" + *path + "' does not exist"));
  return r;
}

Response HandleMpuPart(const Request& req, ArtifactService& svc) {
  auto number = ParseUint64(req.Param("part_number").value_or(""));
  if (!number || *number < 1 || *number > static_cast<uint64_t>(kMaxParts)) {
    return wire::Error(InvalidArgument("the part number must be 1.." + std::to_string(kMaxParts)));
  }
  if (!req.body_stream) return wire::Error(Internal("part route without a streaming body"));
  auto checks = ChecksFromHeaders(req);
  if (!checks.ok()) return wire::Error(checks.status());
  auto part = svc.uploads.WritePart(req.Param("upload_id").value_or(""), static_cast<int>(*number),
                                    *req.body_stream, *checks);
  if (!part.ok()) return wire::Error(part.status());
  Response r = wire::OkJson(
      nlohmann::json{{"part_number", part->number}, {"size", part->size}, {"etag", part->etag}});
  r.headers.Set("ETag", "\"" + part->etag + "\"");
  return r;
}

server::RouteRegistrar ArtifactRoutes(std::shared_ptr<ArtifactService> svc) {
  return [svc](server::Router& router) -> Status {
    const std::string p(kArtifactsPrefix);
    auto bind = [svc](Response (*h)(const Request&, ArtifactService&)) {
      return [svc, h](const Request& r) { return h(r, *svc); };
    };
    FERRY_RETURN_IF_ERROR(router.Add("GET", p + "/artifacts", bind(&HandleList)));
    FERRY_RETURN_IF_ERROR(
        router.AddStreaming("PUT", p + "/artifacts/{path...}", bind(&HandleUpload)));
    FERRY_RETURN_IF_ERROR(router.Add("GET", p + "/artifacts/{path...}", bind(&HandleDownload)));
    FERRY_RETURN_IF_ERROR(router.Add("DELETE", p + "/artifacts/{path...}", bind(&HandleDelete)));
    FERRY_RETURN_IF_ERROR(router.Add("POST", p + "/mpu/create/{path...}", bind(&HandleMpuCreate)));
    FERRY_RETURN_IF_ERROR(
        router.Add("POST", p + "/mpu/complete/{path...}", bind(&HandleMpuComplete)));
    FERRY_RETURN_IF_ERROR(router.Add("POST", p + "/mpu/abort/{path...}", bind(&HandleMpuAbort)));
    FERRY_RETURN_IF_ERROR(router.AddStreaming("PUT", p + "/mpu/part/{upload_id}/{part_number}",
                                              bind(&HandleMpuPart)));
    FERRY_RETURN_IF_ERROR(router.Add("GET", p + "/mpu/{upload_id}", bind(&HandleMpuDescribe)));
    return Status();
  };
}

server::RouteRegistrar ArtifactRoutes(std::shared_ptr<storage::Store> store, std::string root_key,
                                      std::shared_ptr<UploadObserver> observer) {
  return ArtifactRoutes(std::make_shared<ArtifactService>(std::move(store), std::move(root_key),
                                                          std::move(observer)));
}

}  // namespace ferry::tracker::artifacts
