#include "cluster/webhook/admission_review.h"

#include <algorithm>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "checkpoint/base64.h"
#include "cluster/webhook/json_fields.h"
#include "common/json_string.h"
#include "common/quote.h"

namespace qrm::webhook {
namespace {

using Value = rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// Operation's values in types.go.
constexpr std::string_view kOperations[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};

StatusOr<GroupVersionKind> ReadGvk(const Value& v, const std::string& path) {
  GroupVersionKind gvk;
  QRM_ASSIGN_OR_RETURN(gvk.group, StringField(v, "group", path));
  QRM_ASSIGN_OR_RETURN(gvk.version, StringField(v, "version", path));
  QRM_ASSIGN_OR_RETURN(gvk.kind, StringField(v, "kind", path));
  return gvk;
}

StatusOr<GroupVersionResource> ReadGvr(const Value& v, const std::string& path) {
  GroupVersionResource gvr;
  QRM_ASSIGN_OR_RETURN(gvr.group, StringField(v, "group", path));
  QRM_ASSIGN_OR_RETURN(gvr.version, StringField(v, "version", path));
  QRM_ASSIGN_OR_RETURN(gvr.resource, StringField(v, "resource", path));
  return gvr;
}

StatusOr<std::vector<std::string>> ReadStrings(const Value* array, const std::string& path) {
  std::vector<std::string> out;
  if (array == nullptr) return out;
  for (rapidjson::SizeType i = 0; i < array->Size(); ++i) {
    const Value& item = (*array)[i];
    if (!item.IsString()) return WrongType(fmt::format("{}[{}]", path, i), "a string", item);
    out.push_back(JsonString(item));
  }
  return out;
}

StatusOr<UserInfo> ReadUserInfo(const Value* v, const std::string& path) {
  UserInfo info;
  if (v == nullptr) return info;
  QRM_ASSIGN_OR_RETURN(info.username, StringField(*v, "username", path));
  QRM_ASSIGN_OR_RETURN(info.uid, StringField(*v, "uid", path));
  QRM_ASSIGN_OR_RETURN(const Value* groups, ArrayField(*v, "groups", path));
  QRM_ASSIGN_OR_RETURN(info.groups, ReadStrings(groups, FieldPath(path, "groups")));
  QRM_ASSIGN_OR_RETURN(const Value* extra, ObjectField(*v, "extra", path));
  if (extra == nullptr) return info;
  for (const auto& member : extra->GetObject()) {
    const std::string key = JsonString(member.name);
    const std::string key_path = fmt::format("{}.extra[{}]", path, Quote(key));
    if (member.value.IsNull()) {
      info.extra[key];
      continue;
    }
    if (!member.value.IsArray()) return WrongType(key_path, "an array", member.value);
    QRM_ASSIGN_OR_RETURN(info.extra[key], ReadStrings(&member.value, key_path));
  }
  return info;
}

// A runtime.RawExtension: any JSON value, kept as text.
std::string RawField(const Value& object, std::string_view name) {
  const Value* v = Member(object, name);
  return v == nullptr ? std::string() : JsonText(*v);
}

Status ReadNames(const Value& v, AdmissionRequest& r) {
  QRM_ASSIGN_OR_RETURN(r.uid, StringField(v, "uid", "request"));
  if (r.uid.empty()) return InvalidArgumentError("request.uid: missing (the answer must echo it)");
  QRM_ASSIGN_OR_RETURN(r.sub_resource, StringField(v, "subResource", "request"));
  QRM_ASSIGN_OR_RETURN(r.request_sub_resource, StringField(v, "requestSubResource", "request"));
  QRM_ASSIGN_OR_RETURN(r.name, StringField(v, "name", "request"));
  QRM_ASSIGN_OR_RETURN(r.namespace_, StringField(v, "namespace", "request"));
  QRM_ASSIGN_OR_RETURN(r.operation, StringField(v, "operation", "request"));
  if (std::find(std::begin(kOperations), std::end(kOperations), r.operation) ==
      std::end(kOperations)) {
    return InvalidArgumentError(fmt::format(
        "request.operation: {} is not CREATE, UPDATE, DELETE or CONNECT", Quote(r.operation)));
  }
  return Status::Ok();
}

Status ReadKinds(const Value& v, AdmissionRequest& r) {
  QRM_ASSIGN_OR_RETURN(const Value* kind, ObjectField(v, "kind", "request"));
  if (kind != nullptr) {
    QRM_ASSIGN_OR_RETURN(r.kind, ReadGvk(*kind, "request.kind"));
  }
  QRM_ASSIGN_OR_RETURN(const Value* resource, ObjectField(v, "resource", "request"));
  if (resource != nullptr) {
    QRM_ASSIGN_OR_RETURN(r.resource, ReadGvr(*resource, "request.resource"));
  }
  QRM_ASSIGN_OR_RETURN(const Value* request_kind, ObjectField(v, "requestKind", "request"));
  if (request_kind != nullptr) {
    QRM_ASSIGN_OR_RETURN(r.request_kind, ReadGvk(*request_kind, "request.requestKind"));
  }
  QRM_ASSIGN_OR_RETURN(const Value* request_resource, ObjectField(v, "requestResource", "request"));
  if (request_resource != nullptr) {
    QRM_ASSIGN_OR_RETURN(r.request_resource, ReadGvr(*request_resource, "request.requestResource"));
  }
  return Status::Ok();
}

StatusOr<AdmissionRequest> ReadRequest(const Value& v) {
  AdmissionRequest r;
  QRM_RETURN_IF_ERROR(ReadNames(v, r));
  QRM_RETURN_IF_ERROR(ReadKinds(v, r));
  QRM_ASSIGN_OR_RETURN(const Value* user_info, ObjectField(v, "userInfo", "request"));
  QRM_ASSIGN_OR_RETURN(r.user_info, ReadUserInfo(user_info, "request.userInfo"));
  QRM_ASSIGN_OR_RETURN(r.dry_run, BoolField(v, "dryRun", "request"));
  r.object = RawField(v, "object");
  r.old_object = RawField(v, "oldObject");
  r.options = RawField(v, "options");
  return r;
}

Status CheckTypeMeta(const AdmissionReview& review) {
  if (review.api_version != kAdmissionV1 && review.api_version != kAdmissionV1beta1) {
    return InvalidArgumentError(fmt::format("apiVersion: {} is not {} (or {})",
                                            Quote(review.api_version), kAdmissionV1,
                                            kAdmissionV1beta1));
  }
  if (review.kind != kAdmissionReviewKind) {
    return InvalidArgumentError(
        fmt::format("kind: {} is not {}", Quote(review.kind), kAdmissionReviewKind));
  }
  return Status::Ok();
}

void WriteString(Writer& w, std::string_view key, std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void WriteKey(Writer& w, std::string_view key) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
}

// metav1.Status: TypeMeta (empty, omitted), ListMeta (a struct: Go writes it even when empty),
// then status, message, reason, details, code, the empty ones omitted.
void WriteStatus(Writer& w, const ApiStatus& s) {
  w.StartObject();
  WriteKey(w, "metadata");
  w.StartObject();
  w.EndObject();
  if (!s.status.empty()) WriteString(w, "status", s.status);
  if (!s.message.empty()) WriteString(w, "message", s.message);
  if (!s.reason.empty()) WriteString(w, "reason", s.reason);
  if (s.code != 0) {
    WriteKey(w, "code");
    w.Int(s.code);
  }
  w.EndObject();
}

void WriteResponse(Writer& w, const AdmissionResponse& r) {
  w.StartObject();
  WriteString(w, "uid", r.uid);
  WriteKey(w, "allowed");
  w.Bool(r.allowed);
  if (r.status) {
    WriteKey(w, "status");
    WriteStatus(w, *r.status);
  }
  if (!r.patch.empty()) {
    // Go writes a []byte as standard base64 with padding.
    WriteString(w, "patch", checkpoint::Base64Encode(r.patch));
    WriteString(w, "patchType", "JSONPatch");
  }
  if (!r.audit_annotations.empty()) {
    WriteKey(w, "auditAnnotations");
    w.StartObject();
    for (const auto& [key, value] : r.audit_annotations) WriteString(w, key, value);
    w.EndObject();
  }
  if (!r.warnings.empty()) {
    WriteKey(w, "warnings");
    w.StartArray();
    for (const std::string& warning : r.warnings) {
      w.String(warning.data(), static_cast<rapidjson::SizeType>(warning.size()));
    }
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace

StatusOr<AdmissionReview> DecodeAdmissionReview(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(fmt::format("AdmissionReview: not JSON: {} at offset {}",
                                            rapidjson::GetParseError_En(doc.GetParseError()),
                                            doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) return WrongType("AdmissionReview", "an object", doc);
  AdmissionReview review;
  QRM_ASSIGN_OR_RETURN(review.api_version, StringField(doc, "apiVersion", ""));
  QRM_ASSIGN_OR_RETURN(review.kind, StringField(doc, "kind", ""));
  QRM_RETURN_IF_ERROR(CheckTypeMeta(review));
  QRM_ASSIGN_OR_RETURN(const Value* request, ObjectField(doc, "request", ""));
  if (request == nullptr) return InvalidArgumentError("request: missing");
  QRM_ASSIGN_OR_RETURN(review.request, ReadRequest(*request));
  return review;
}

std::string EncodeAdmissionReview(const AdmissionReview& review) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  // TypeMeta: Go writes kind before apiVersion.
  w.StartObject();
  WriteString(w, "kind", review.kind);
  WriteString(w, "apiVersion", review.api_version);
  if (review.response) {
    WriteKey(w, "response");
    WriteResponse(w, *review.response);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace qrm::webhook
