#pragma once
// MLflow's artifact proxy (`mlflow server --serve-artifacts`) as handlers on the server's router,
// for any Ferry store. Endpoints (docs/semantics/mlflow-artifacts.md):
//   PUT    /api/2.0/mlflow-artifacts/artifacts/{path}   upload (streamed, verified, atomic)
//   GET    /api/2.0/mlflow-artifacts/artifacts/{path}   download (Range; HEAD too)
//   GET    /api/2.0/mlflow-artifacts/artifacts?path=DIR list {"files":[{path,is_dir,file_size}]}
//   DELETE /api/2.0/mlflow-artifacts/artifacts/{path}   delete (a directory: all below it)
//   POST   /api/2.0/mlflow-artifacts/mpu/create/{path}  {"num_parts"[,"size","part_size"]}
//   PUT    /api/2.0/mlflow-artifacts/mpu/part/{upload_id}/{part_number}
//   GET    /api/2.0/mlflow-artifacts/mpu/{upload_id}    the parts stored so far (resume)
//   POST   /api/2.0/mlflow-artifacts/mpu/complete/{path} {"upload_id","parts":[...]}
//   POST   /api/2.0/mlflow-artifacts/mpu/abort/{path}   {"upload_id"}
// Errors are MLflow's {"error_code","message"} with the HTTP status of the Status code.

#include <memory>
#include <string>

#include "server/http_types.h"
#include "server/router.h"
#include "storage/store.h"
#include "tracker/artifacts/artifact_repo.h"
#include "tracker/artifacts/multipart.h"

namespace ferry::tracker::artifacts {

inline constexpr std::string_view kArtifactsPrefix = "/api/2.0/mlflow-artifacts";

// Told about uploads (server-side checkpoint retention, tracker/retention): Started() before a
// PUT's body is read or when a multipart upload is created, Finished() when the PUT ended
// (published or not) or the multipart upload was completed or aborted. Finished() runs on the
// handler's thread before the answer is sent. Must be thread-safe.
class UploadObserver {
 public:
  virtual ~UploadObserver() = default;
  virtual void Started(std::string_view path) = 0;
  virtual void Finished(std::string_view path, bool published) = 0;
};

// What the handlers share.
struct ArtifactService {
  ArtifactService(std::shared_ptr<storage::Store> store, std::string root_key,
                  std::shared_ptr<UploadObserver> observer = nullptr)
      : repo(store, root_key), uploads(store, root_key), observer(std::move(observer)) {}
  ArtifactRepo repo;
  MultipartUploads uploads;
  std::shared_ptr<UploadObserver> observer;  // may be null
};

server::Response HandleUpload(const server::Request& req, ArtifactService& svc);
server::Response HandleDownload(const server::Request& req, ArtifactService& svc);
server::Response HandleList(const server::Request& req, ArtifactService& svc);
server::Response HandleDelete(const server::Request& req, ArtifactService& svc);
server::Response HandleMpuCreate(const server::Request& req, ArtifactService& svc);
server::Response HandleMpuPart(const server::Request& req, ArtifactService& svc);
server::Response HandleMpuDescribe(const server::Request& req, ArtifactService& svc);
server::Response HandleMpuComplete(const server::Request& req, ArtifactService& svc);
server::Response HandleMpuAbort(const server::Request& req, ArtifactService& svc);

// Adds the routes above for `svc`, which the registrar keeps alive.
server::RouteRegistrar ArtifactRoutes(std::shared_ptr<ArtifactService> svc);
// Artifacts below `root_key` of `store` (e.g. "tracker/artifacts" of ferry serve's --data).
// `observer` (may be null) hears of uploads.
server::RouteRegistrar ArtifactRoutes(std::shared_ptr<storage::Store> store, std::string root_key,
                                      std::shared_ptr<UploadObserver> observer = nullptr);

}  // namespace ferry::tracker::artifacts
