#include "base/redact.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(RedactTest, RemovesHeaderSecrets) {
  std::string out = Redact(
      "> GET / HTTP/1.1\r\nAuthorization: AWS4-HMAC-SHA256 Credential=AKID/x, Signature=abc\r\n"
      "X-Amz-Security-Token: FQoGZXIvYXdzEXAMPLETOKEN\r\nHost: h\r\n");
  EXPECT_EQ(out.find("abc"), std::string::npos);
  EXPECT_EQ(out.find("FQoGZXIvYXdzEXAMPLETOKEN"), std::string::npos);
  EXPECT_NE(out.find("Host: h"), std::string::npos);
}

TEST(RedactTest, RemovesPresignedQuerySecrets) {
  std::string out = Redact(
      "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKID%2F2013&X-Amz-Signature=deadbeef&x=1");
  EXPECT_EQ(out.find("deadbeef"), std::string::npos);
  EXPECT_EQ(out.find("AKID"), std::string::npos);
  EXPECT_NE(out.find("x=1"), std::string::npos);
}

TEST(RedactTest, RemovesCredentialFieldsInJsonXmlAndIni) {
  EXPECT_EQ(
      Redact(R"({"SecretAccessKey": "s3cr3tvalue", "Token": "tok3nvalue"})").find("s3cr3tvalue"),
      std::string::npos);
  EXPECT_EQ(Redact("<SecretAccessKey>abcdefgh</SecretAccessKey>").find("abcdefgh"),
            std::string::npos);
  EXPECT_EQ(Redact("aws_secret_access_key = abcdefgh").find("abcdefgh"), std::string::npos);
}

TEST(RedactTest, RemovesGenericSecretShapes) {
  // Azure SAS, generic tokens, passwords on command lines, userinfo in URLs.
  for (const char* in :
       {"GET https://acct.blob.core.windows.net/c/f?sv=2020&sig=Zm9vYmFyYmF6cXV4 HTTP/1.1",
        "train.py --token=Zm9vYmFyYmF6cXV4 --lr 3", "mysql --password=Zm9vYmFyYmF6cXV4 -h db",
        "mysql --password Zm9vYmFyYmF6cXV4 -h db", "{\"password\": \"Zm9vYmFyYmF6cXV4\"}",
        "db_password = Zm9vYmFyYmF6cXV4", "Host: user:Zm9vYmFyYmF6cXV4@127.0.0.1:7480",
        "endpoint=http://user:Zm9vYmFyYmF6cXV4@127.0.0.1:7480/x",
        "https://u:Zm9vYmFyYmF6cXV4@h/p?api_key=Zm9vYmFyYmF6cXV4&secret=Zm9vYmFyYmF6cXV4"}) {
    std::string out = Redact(in);
    EXPECT_EQ(out.find("Zm9vYmFyYmF6cXV4"), std::string::npos) << in << " -> " << out;
  }
  EXPECT_EQ(Redact("see https://example.com/a@b"), "see https://example.com/a@b");
  EXPECT_EQ(Redact("Write '/data/x': file exists"), "Write '/data/x': file exists");
}

TEST(RedactTest, KeepsProseThatOnlyNamesTheVariables) {
  std::string msg = "set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, web identity, or a profile";
  EXPECT_EQ(Redact(msg), msg);
  EXPECT_EQ(Redact("AWS_SECRET_ACCESS_KEY=abcdefgh").find("abcdefgh"), std::string::npos);
}

TEST(RedactTest, RemovesRegisteredSecretValuesAnywhere) {
  RegisterSecret("verysecretvalue123");
  EXPECT_EQ(Redact("oops verysecretvalue123 leaked"), "oops [REDACTED] leaked");
}

}  // namespace
}  // namespace ferry
