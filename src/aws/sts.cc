#include "aws/sts.h"

#include <pugixml.hpp>

#include "base/redact.h"

namespace ferry::aws {

Result<Credentials> ParseAssumeRoleWithWebIdentityResponse(std::string_view xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size())) {
    return Status(StatusCode::kInternal, "STS answer is not XML");
  }
  auto result =
      doc.child("AssumeRoleWithWebIdentityResponse").child("AssumeRoleWithWebIdentityResult");
  auto c = result.child("Credentials");
  Credentials out{.access_key_id = c.child_value("AccessKeyId"),
                  .secret_access_key = c.child_value("SecretAccessKey"),
                  .session_token = c.child_value("SessionToken"),
                  .identity = result.child("AssumedRoleUser").child_value("Arn")};
  if (out.access_key_id.empty() || out.secret_access_key.empty()) {
    return Status(StatusCode::kInternal, "STS answer holds no credentials");
  }
  RegisterSecret(out.secret_access_key);
  RegisterSecret(out.session_token);
  if (auto exp = ParseIso8601(c.child_value("Expiration"))) out.expiration = *exp;
  return out;
}

std::string ParseStsError(std::string_view xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size())) return "";
  auto err = doc.select_node("//Error").node();
  if (!err) return "";
  std::string code = err.child_value("Code");
  std::string msg = err.child_value("Message");
  return msg.empty() ? code : code + ": " + msg;
}

}  // namespace ferry::aws
