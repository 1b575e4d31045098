#include "proxy/hf/hf_xet.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "proxy/hf/hf_paths.h"

namespace ferry::proxy::hf {
namespace {

TEST(WithoutXetFieldsTest, RemovesXetMembersAtAnyDepthAndKeepsTheRest) {
  const std::string tree = R"([{"type":"file","oid":"a1","size":5,"path":"model.safetensors",)"
                           R"("lfs":{"oid":"b2","size":5,"pointerSize":134},"xetHash":"c3"},)"
                           R"({"type":"file","oid":"d4","size":1,"path":"config.json"}])";
  auto out = nlohmann::json::parse(WithoutXetFields(tree));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].contains("xetHash"));
  EXPECT_EQ(out[0]["lfs"]["oid"], "b2");
  EXPECT_EQ(out[1]["path"], "config.json");
  auto info = nlohmann::json::parse(WithoutXetFields(
      R"({"id":"org/m","xetEnabled":true,"siblings":[{"rfilename":"x","XetHash":"e"}]})"));
  EXPECT_FALSE(info.contains("xetEnabled"));
  EXPECT_FALSE(info["siblings"][0].contains("XetHash"));
  EXPECT_EQ(info["siblings"][0]["rfilename"], "x");
}

TEST(WithoutXetFieldsTest, LeavesTextWithoutXetMembersOrNotJsonAsItIs) {
  // A value that mentions Xet is not a Xet field: the text is returned byte for byte.
  const std::string values = R"({ "path": "xet.safetensors", "title": "Xet" })";
  EXPECT_EQ(WithoutXetFields(values), values);
  EXPECT_EQ(WithoutXetFields("[]"), "[]");
  EXPECT_EQ(WithoutXetFields("xetHash: not json"), "xetHash: not json");
}

TEST(XetTokenTest, TokenRequestsParseAndAreRefusedWithTheWayOut) {
  for (const char* rest : {"models/org/m/xet-read-token/main", "datasets/org/d/xet-read-token/main",
                           "models/gpt2/xet-read-token/main", "models/org/m/xet-write-token"}) {
    auto ap = ParseApiPath(rest);
    ASSERT_TRUE(ap) << rest;
    EXPECT_TRUE(IsXetTokenTail(ap->tail)) << rest;
  }
  EXPECT_FALSE(IsXetTokenTail("tree/main"));
  EXPECT_FALSE(IsXetTokenTail("revision/main"));
  auto r = XetTokenRefusal("models/org/m");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.headers.Get("X-Error-Code").value_or(""), "XetNotServed");
  EXPECT_NE(r.headers.Get("X-Error-Message").value_or("").find("HF_HUB_DISABLE_XET=1"),
            std::string::npos);
}

}  // namespace
}  // namespace ferry::proxy::hf
