#include "cluster/objects/json_io.h"

#include <algorithm>

#include <fmt/format.h>
#include <rapidjson/error/en.h>

#include "cluster/objects/meta_time.h"
#include "common/quote.h"

namespace qrm::cluster::json {
namespace {

const char* TypeName(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType: return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType: return "a boolean";
    case rapidjson::kObjectType: return "an object";
    case rapidjson::kArrayType: return "an array";
    case rapidjson::kStringType: return "a string";
    case rapidjson::kNumberType: return "a number";
  }
  return "a value";
}

Status WrongType(const Field& field, std::string_view want) {
  return InvalidArgumentError(
      fmt::format("{}: {} where {} belongs", field.path, TypeName(*field.value), want));
}

}  // namespace

StatusOr<rapidjson::Document> Parse(std::string_view text, std::string_view what) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(fmt::format("{}: not JSON at byte {}: {}", what,
                                            doc.GetErrorOffset(),
                                            rapidjson::GetParseError_En(doc.GetParseError())));
  }
  return doc;
}

Status RequireObject(const Field& field) {
  return field.value->IsObject() ? Status::Ok() : WrongType(field, "an object");
}

StatusOr<std::optional<Field>> Member(const Field& object, const char* key) {
  QRM_RETURN_IF_ERROR(RequireObject(object));
  auto it = object.value->FindMember(key);
  if (it == object.value->MemberEnd() || it->value.IsNull()) return std::optional<Field>();
  return std::optional<Field>(Field{
      &it->value, object.path.empty() ? std::string(key) : fmt::format("{}.{}", object.path, key)});
}

StatusOr<std::string> String(const Field& field) {
  if (!field.value->IsString()) return WrongType(field, "a string");
  return std::string(field.value->GetString(), field.value->GetStringLength());
}

StatusOr<int64_t> Int(const Field& field) {
  if (!field.value->IsInt64()) return WrongType(field, "an integer");
  return field.value->GetInt64();
}

StatusOr<Quantity> QuantityOf(const Field& field) {
  std::string text;
  if (field.value->IsString()) {
    text.assign(field.value->GetString(), field.value->GetStringLength());
  } else if (field.value->IsInt64()) {
    text = std::to_string(field.value->GetInt64());
  } else if (field.value->IsNumber()) {
    text = fmt::format("{}", field.value->GetDouble());
  } else {
    return WrongType(field, "a quantity");
  }
  auto q = Quantity::Parse(text);
  if (!q.ok()) {
    return InvalidArgumentError(
        fmt::format("{}: {} is not a quantity: {}", field.path, Quote(text), q.status().message()));
  }
  return *q;
}

StatusOr<Quantity> NonNegativeQuantity(const Field& field) {
  QRM_ASSIGN_OR_RETURN(Quantity q, QuantityOf(field));
  if (q.AsDouble() < 0) {
    return InvalidArgumentError(fmt::format("{}: {} is negative", field.path, Quote(q.ToString())));
  }
  return q;
}

StatusOr<int64_t> Time(const Field& field) {
  QRM_ASSIGN_OR_RETURN(std::string text, String(field));
  auto t = ParseTime(text);
  if (!t.ok()) return InvalidArgumentError(fmt::format("{}: {}", field.path, t.status().message()));
  return *t;
}

StatusOr<int64_t> Duration(const Field& field) {
  QRM_ASSIGN_OR_RETURN(std::string text, String(field));
  auto d = ParseDuration(text);
  if (!d.ok()) return InvalidArgumentError(fmt::format("{}: {}", field.path, d.status().message()));
  return *d;
}

// A key as it appears in a path: as it is when it is a plain name, quoted (escaped and
// shortened) otherwise, so an error message stays one printable line.
std::string PathKey(std::string_view key) {
  const bool plain =
      !key.empty() && key.size() <= 128 && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.' || c == '/';
      });
  return plain ? std::string(key) : Quote(key);
}

Status ForEachMember(const Field& object,
                     const std::function<Status(std::string_view, const Field&)>& each) {
  QRM_RETURN_IF_ERROR(RequireObject(object));
  for (const auto& m : object.value->GetObject()) {
    const std::string_view key(m.name.GetString(), m.name.GetStringLength());
    QRM_RETURN_IF_ERROR(
        each(key, Field{&m.value, fmt::format("{}.{}", object.path, PathKey(key))}));
  }
  return Status::Ok();
}

Status ForEachItem(const Field& array, const std::function<Status(const Field&)>& each) {
  if (!array.value->IsArray()) return WrongType(array, "an array");
  size_t i = 0;
  for (const auto& item : array.value->GetArray()) {
    QRM_RETURN_IF_ERROR(each(Field{&item, fmt::format("{}[{}]", array.path, i++)}));
  }
  return Status::Ok();
}

Status ReadString(const Field& object, const char* key, std::string* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> member, Member(object, key));
  if (!member) return Status::Ok();
  QRM_ASSIGN_OR_RETURN(*out, String(*member));
  return Status::Ok();
}

Status ReadStringMap(const Field& object, const char* key,
                     std::map<std::string, std::string>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> member, Member(object, key));
  if (!member) return Status::Ok();
  return ForEachMember(*member, [&](std::string_view k, const Field& v) -> Status {
    QRM_ASSIGN_OR_RETURN((*out)[std::string(k)], String(v));
    return Status::Ok();
  });
}

void WriteKey(Writer& w, std::string_view key) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
}

void WriteStringValue(Writer& w, std::string_view value) {
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void WriteString(Writer& w, std::string_view key, std::string_view value) {
  WriteKey(w, key);
  WriteStringValue(w, value);
}

void WriteStringIfSet(Writer& w, std::string_view key, std::string_view value) {
  if (!value.empty()) WriteString(w, key, value);
}

void WriteStringMapIfSet(Writer& w, std::string_view key,
                         const std::map<std::string, std::string>& m) {
  if (m.empty()) return;
  WriteKey(w, key);
  w.StartObject();
  for (const auto& [k, v] : m) WriteString(w, k, v);
  w.EndObject();
}

void WriteTypeAndObjectMeta(Writer& w, std::string_view kind, std::string_view api_version,
                            const ObjectMeta& meta) {
  WriteString(w, "kind", kind);
  WriteString(w, "apiVersion", api_version);
  w.Key("metadata");
  w.StartObject();
  WriteStringIfSet(w, "name", meta.name);
  WriteStringIfSet(w, "namespace", meta.namespace_);
  WriteStringIfSet(w, "uid", meta.uid);
  WriteStringIfSet(w, "resourceVersion", meta.resource_version);
  if (meta.generation != 0) {
    w.Key("generation");
    w.Int64(meta.generation);
  }
  w.Key("creationTimestamp");
  if (meta.creation_timestamp) {
    const std::string t = FormatTime(*meta.creation_timestamp);
    w.String(t.c_str());
  } else {
    w.Null();
  }
  WriteStringMapIfSet(w, "labels", meta.labels);
  WriteStringMapIfSet(w, "annotations", meta.annotations);
  w.EndObject();
}

StatusOr<ObjectMeta> ReadTypeAndObjectMeta(const Field& object, std::string_view kind,
                                           std::string_view api_version) {
  std::string got_kind, got_version;
  QRM_RETURN_IF_ERROR(ReadString(object, "kind", &got_kind));
  QRM_RETURN_IF_ERROR(ReadString(object, "apiVersion", &got_version));
  if (!got_kind.empty() && got_kind != kind) {
    return InvalidArgumentError(fmt::format("{}kind: {} where {} belongs",
                                            object.path.empty() ? "" : object.path + ".",
                                            Quote(got_kind), Quote(kind)));
  }
  if (!got_version.empty() && got_version != api_version) {
    return InvalidArgumentError(fmt::format("{}apiVersion: {} where {} belongs",
                                            object.path.empty() ? "" : object.path + ".",
                                            Quote(got_version), Quote(api_version)));
  }
  ObjectMeta meta;
  QRM_ASSIGN_OR_RETURN(std::optional<Field> m, Member(object, "metadata"));
  if (!m) return meta;
  QRM_RETURN_IF_ERROR(ReadString(*m, "name", &meta.name));
  QRM_RETURN_IF_ERROR(ReadString(*m, "namespace", &meta.namespace_));
  QRM_RETURN_IF_ERROR(ReadString(*m, "uid", &meta.uid));
  QRM_RETURN_IF_ERROR(ReadString(*m, "resourceVersion", &meta.resource_version));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> generation, Member(*m, "generation"));
  if (generation) {
    QRM_ASSIGN_OR_RETURN(meta.generation, Int(*generation));
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> created, Member(*m, "creationTimestamp"));
  if (created) {
    QRM_ASSIGN_OR_RETURN(meta.creation_timestamp, Time(*created));
  }
  QRM_RETURN_IF_ERROR(ReadStringMap(*m, "labels", &meta.labels));
  QRM_RETURN_IF_ERROR(ReadStringMap(*m, "annotations", &meta.annotations));
  return meta;
}

}  // namespace qrm::cluster::json
