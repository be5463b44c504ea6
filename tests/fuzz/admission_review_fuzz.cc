// Fuzzes the pod webhook (cluster/webhook): kube-apiserver posts AdmissionReviews built from
// whatever pod a user submits, and the webhook must answer each, never misread it.
//
// Input: the HTTP body. Properties beyond "does not crash":
//  * the answer is 400 with a message, or 200 with an AdmissionReview of the request's
//    apiVersion and kind whose response echoes the request's uid;
//  * an allowed answer's patch is base64 of a JSON array of add/replace operations on
//    /metadata/annotations; a refused one has a Failure status with a message and no patch;
//  * a second call gives the same answer.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "cluster/webhook/admission_review.h"
#include "cluster/webhook/webhook_handler.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "admission_review_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

std::string Unbase64(std::string_view text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    const size_t v = kAlphabet.find(c);
    Check(v != std::string::npos, "a patch that is not base64");
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xff);
    }
  }
  return out;
}

void CheckPatch(const std::string& patch) {
  rapidjson::Document doc;
  doc.Parse(patch.data(), patch.size());
  Check(!doc.HasParseError() && doc.IsArray() && !doc.Empty(), "a patch that is not an array");
  for (const auto& op : doc.GetArray()) {
    Check(op.IsObject() && op.HasMember("op") && op["op"].IsString(), "an operation without op");
    const std::string_view name(op["op"].GetString(), op["op"].GetStringLength());
    Check(name == "add" || name == "replace", "an operation other than add or replace");
    Check(op.HasMember("path") && op["path"].IsString(), "an operation without a path");
    const std::string_view path(op["path"].GetString(), op["path"].GetStringLength());
    Check(path.starts_with("/metadata/annotations"), "a path outside the annotations");
    Check(op.HasMember("value"), "an operation without a value");
  }
}

void CheckAnswer(const qrm::webhook::AdmissionReview& request, const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  Check(!doc.HasParseError() && doc.IsObject(), "a 200 answer that is not a JSON object");
  Check(doc["apiVersion"].GetString() == request.api_version, "apiVersion not echoed");
  Check(doc["kind"].GetString() == request.kind, "kind not echoed");
  const auto& response = doc["response"];
  Check(std::string_view(response["uid"].GetString(), response["uid"].GetStringLength()) ==
            request.request->uid,
        "uid not echoed");
  if (response["allowed"].GetBool()) {
    if (response.HasMember("patch")) CheckPatch(Unbase64(response["patch"].GetString()));
    return;
  }
  Check(!response.HasMember("patch"), "a refusal with a patch");
  Check(response.HasMember("status") && response["status"].HasMember("message"),
        "a refusal without a message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  qrm::webhook::WebhookConfig config;
  config.plugin_resources = {"example.com/widget"};
  config.guaranteed_whole_cores_dedicated = size % 2 == 0;
  const qrm::http::Response answer = qrm::webhook::ServeAdmission(config, body);
  const qrm::http::Response again = qrm::webhook::ServeAdmission(config, body);
  Check(answer.status == again.status && answer.body == again.body, "two answers disagree");
  const auto request = qrm::webhook::DecodeAdmissionReview(body);
  if (!request.ok()) {
    Check(answer.status == 400 && !answer.body.empty(), "an unreadable review not answered 400");
    return 0;
  }
  Check(answer.status == 200, "a readable review not answered 200");
  CheckAnswer(*request, answer.body);
  return 0;
}
