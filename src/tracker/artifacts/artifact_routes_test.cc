#include "tracker/artifacts/artifact_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/crc32c.h"
#include "base/hash.h"
#include "base/strings.h"
#include "storage/memory/memory_store.h"
#include "tracker/artifacts/artifacts_test_util.h"

namespace ferry::tracker::artifacts {
namespace {

using server::Request;
using server::Response;
using testing::Bytes;

const std::string kApi(kArtifactsPrefix);

class ArtifactRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = storage::MakeMemoryStore();
    ASSERT_TRUE(ArtifactRoutes(store_, "tracker/artifacts")(router_).ok());
  }
  Response Call(std::string method, std::string target, std::string body = "",
                std::vector<std::pair<std::string, std::string>> headers = {}) {
    Request r;
    r.method = std::move(method);
    size_t q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) {
      for (auto kv : Split(std::string_view(target).substr(q + 1), '&')) {
        size_t eq = kv.find('=');
        r.query.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
      }
    }
    for (auto& [k, v] : headers) r.headers.Add(k, v);
    r.headers.Add("Host", "127.0.0.1:9");
    if (router_.StreamsBody(r.method, r.path)) {
      r.body_stream = server::StringBodyReader(body, body.size());
    } else {
      r.body = std::move(body);
    }
    return router_.Dispatch(std::move(r));
  }
  static std::string BodyOf(Response& r) {
    if (!r.stream) return r.body;
    std::string out;
    char buf[4096];
    while (true) {
      auto n = r.stream->Read(buf, sizeof buf);
      EXPECT_TRUE(n.ok());
      if (!n.ok() || *n == 0) break;
      out.append(buf, *n);
    }
    return out;
  }
  static nlohmann::json JsonOf(Response& r) { return nlohmann::json::parse(BodyOf(r)); }

  server::Router router_;
  std::shared_ptr<storage::Store> store_;
};

TEST_F(ArtifactRoutesTest, UploadDownloadRangeListDelete) {
  std::string data = Bytes(300000);
  Response put = Call("PUT", kApi + "/artifacts/1/run/artifacts/model.bin", data,
                      {{"x-ferry-sha256", Sha256Hex(data)}});
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(put.body, "{}");
  Response get = Call("GET", kApi + "/artifacts/1/run/artifacts/model.bin");
  EXPECT_EQ(get.status, 200);
  EXPECT_EQ(get.content_length, data.size());
  EXPECT_EQ(BodyOf(get), data);
  Response range =
      Call("GET", kApi + "/artifacts/1/run/artifacts/model.bin", "", {{"Range", "bytes=10-19"}});
  EXPECT_EQ(range.status, 206);
  EXPECT_EQ(*range.headers.Get("Content-Range"), "bytes 10-19/300000");
  EXPECT_EQ(BodyOf(range), data.substr(10, 10));
  Response tail =
      Call("GET", kApi + "/artifacts/1/run/artifacts/model.bin", "", {{"Range", "bytes=-5"}});
  EXPECT_EQ(BodyOf(tail), data.substr(data.size() - 5));
  EXPECT_EQ(
      Call("GET", kApi + "/artifacts/1/run/artifacts/model.bin", "", {{"Range", "bytes=300000-"}})
          .status,
      416);

  ASSERT_EQ(Call("PUT", kApi + "/artifacts/1/run/artifacts/metrics.json", "{}").status, 200);
  Response list = Call("GET", kApi + "/artifacts?path=1/run/artifacts");
  ASSERT_EQ(list.status, 200);
  nlohmann::json files = JsonOf(list)["files"];
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0]["path"], "metrics.json");
  EXPECT_EQ(files[1]["path"], "model.bin");
  EXPECT_EQ(files[1]["file_size"], 300000);
  EXPECT_EQ(files[1]["is_dir"], false);
  Response top = Call("GET", kApi + "/artifacts");
  EXPECT_EQ(JsonOf(top)["files"][0]["is_dir"], true);

  EXPECT_EQ(Call("DELETE", kApi + "/artifacts/1/run/artifacts/model.bin").status, 200);
  Response gone = Call("GET", kApi + "/artifacts/1/run/artifacts/model.bin");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(JsonOf(gone)["error_code"], "RESOURCE_DOES_NOT_EXIST");
}

TEST_F(ArtifactRoutesTest, ChecksumMismatchIs400AndNothingAppears) {
  Response put =
      Call("PUT", kApi + "/artifacts/a.bin", "data", {{"Content-MD5", Base64Encode(Md5("other"))}});
  EXPECT_EQ(put.status, 400);
  EXPECT_EQ(JsonOf(put)["error_code"], "INVALID_PARAMETER_VALUE");
  EXPECT_EQ(Call("GET", kApi + "/artifacts/a.bin").status, 404);
  EXPECT_EQ(Call("PUT", kApi + "/artifacts/a.bin", "data", {{"x-ferry-sha256", "zz"}}).status, 400);
}

TEST_F(ArtifactRoutesTest, TraversalIsRejectedEverywhere) {
  // The server's target parser never lets these through; the handlers check again.
  EXPECT_EQ(Call("PUT", kApi + "/artifacts/a/../../x", "d").status, 400);
  EXPECT_EQ(Call("GET", kApi + "/artifacts/../x").status, 400);
  EXPECT_EQ(Call("DELETE", kApi + "/artifacts/a/./b").status, 400);
  EXPECT_EQ(Call("GET", kApi + "/artifacts?path=../..").status, 400);
  EXPECT_EQ(Call("GET", kApi + "/artifacts?path=/etc").status, 400);
  EXPECT_EQ(Call("POST", kApi + "/mpu/create/../x", R"({"num_parts":1})").status, 400);
  EXPECT_EQ(Call("GET", kApi + "/artifacts/.ferry-mpu/x").status, 400);
}

TEST_F(ArtifactRoutesTest, MultipartThroughTheRoutes) {
  Response create =
      Call("POST", kApi + "/mpu/create/big/ckpt.pt", R"({"path":"/tmp/local","num_parts":2})");
  ASSERT_EQ(create.status, 200) << create.body;
  nlohmann::json c = JsonOf(create);
  std::string id = c["upload_id"];
  ASSERT_EQ(c["credentials"].size(), 2u);
  EXPECT_EQ(c["credentials"][1]["part_number"], 2);
  std::string url = c["credentials"][1]["url"];
  EXPECT_EQ(url, "http://127.0.0.1:9" + kApi + "/mpu/part/" + id + "/2");
  // Behind a TLS reverse proxy the part URLs keep the client's scheme.
  Response tls = Call("POST", kApi + "/mpu/create/big/tls.pt", R"({"num_parts":1})",
                      {{"X-Forwarded-Proto", "https"}});
  ASSERT_EQ(tls.status, 200) << tls.body;
  EXPECT_EQ(JsonOf(tls)["credentials"][0]["url"].get<std::string>().rfind("https://127.0.0.1:9", 0),
            0u);
  Response p2 = Call("PUT", kApi + "/mpu/part/" + id + "/2", "world");
  ASSERT_EQ(p2.status, 200) << p2.body;
  EXPECT_EQ(*p2.headers.Get("ETag"), "\"" + Crc32cHex(Crc32cOf("world")) + "\"");
  Response desc = Call("GET", kApi + "/mpu/" + id);
  ASSERT_EQ(desc.status, 200);
  nlohmann::json d = JsonOf(desc);
  ASSERT_EQ(d["parts"].size(), 1u);
  EXPECT_EQ(d["parts"][0]["part_number"], 2);
  EXPECT_EQ(Call("PUT", kApi + "/mpu/part/" + id + "/0", "x").status, 400);
  EXPECT_EQ(
      Call("POST", kApi + "/mpu/complete/big/ckpt.pt", "{\"upload_id\":\"" + id + "\"}").status,
      400);  // part 1 missing: INVALID_PARAMETER_VALUE, as MLflow answers it
  ASSERT_EQ(Call("PUT", kApi + "/mpu/part/" + id + "/1", "hello ").status, 200);
  nlohmann::json done{{"path", "/tmp/local"},
                      {"upload_id", id},
                      {"parts",
                       {{{"part_number", 1}, {"etag", Crc32cHex(Crc32cOf("hello "))}},
                        {{"part_number", 2}, {"etag", *p2.headers.Get("ETag")}}}}};
  Response complete = Call("POST", kApi + "/mpu/complete/big/ckpt.pt", done.dump());
  ASSERT_EQ(complete.status, 200) << complete.body;
  Response get = Call("GET", kApi + "/artifacts/big/ckpt.pt");
  EXPECT_EQ(BodyOf(get), "hello world");

  Response again = Call("POST", kApi + "/mpu/create/big/other.pt", R"({"num_parts":1})");
  std::string id2 = JsonOf(again)["upload_id"];
  ASSERT_EQ(Call("PUT", kApi + "/mpu/part/" + id2 + "/1", "zzz").status, 200);
  EXPECT_EQ(
      Call("POST", kApi + "/mpu/abort/big/other.pt", "{\"upload_id\":\"" + id2 + "\"}").status,
      200);
  EXPECT_EQ(Call("GET", kApi + "/artifacts/big/other.pt").status, 404);
  EXPECT_EQ(Call("GET", kApi + "/mpu/" + id2).status, 404);
  EXPECT_EQ(Call("POST", kApi + "/mpu/create/big/x", R"({"num_parts":"two"})").status, 400);
  EXPECT_EQ(Call("POST", kApi + "/mpu/create/big/x", "not json").status, 400);
}

// Records what the handlers tell an UploadObserver.
class RecordingObserver final : public UploadObserver {
 public:
  void Started(std::string_view path) override { events.push_back("start " + std::string(path)); }
  void Finished(std::string_view path, bool published) override {
    events.push_back((published ? "published " : "ended ") + std::string(path));
  }
  std::vector<std::string> events;
};

TEST_F(ArtifactRoutesTest, TellsTheObserverWhenUploadsStartAndEnd) {
  auto observer = std::make_shared<RecordingObserver>();
  router_ = server::Router();
  ASSERT_TRUE(ArtifactRoutes(store_, "tracker/artifacts", observer)(router_).ok());
  EXPECT_EQ(Call("PUT", kApi + "/artifacts/c/ok.bin", "data").status, 200);
  EXPECT_EQ(Call("PUT", kApi + "/artifacts/c/bad.bin", "data",
                 {{"Content-MD5", Base64Encode(Md5("other"))}})
                .status,
            400);
  auto create = [&](const std::string& path) {
    Response r = Call("POST", kApi + "/mpu/create/" + path, R"({"num_parts":1})");
    EXPECT_EQ(r.status, 200);
    return JsonOf(r)["upload_id"].get<std::string>();
  };
  std::string done = create("c/big.bin");
  ASSERT_EQ(Call("PUT", kApi + "/mpu/part/" + done + "/1", "part").status, 200);
  ASSERT_EQ(
      Call("POST", kApi + "/mpu/complete/c/big.bin", R"({"upload_id":")" + done + "\"}").status,
      200);
  std::string dropped = create("c/gone.bin");
  ASSERT_EQ(
      Call("POST", kApi + "/mpu/abort/c/gone.bin", R"({"upload_id":")" + dropped + "\"}").status,
      200);
  EXPECT_EQ(observer->events,
            (std::vector<std::string>{"start c/ok.bin", "published c/ok.bin", "start c/bad.bin",
                                      "ended c/bad.bin", "start c/big.bin", "published c/big.bin",
                                      "start c/gone.bin", "ended c/gone.bin"}));
}

}  // namespace
}  // namespace ferry::tracker::artifacts
