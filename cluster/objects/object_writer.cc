#include "cluster/objects/object_writer.h"

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster/kube/kube_names.h"

namespace qrm::cluster {
namespace {

std::string ResourceVersionOf(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("metadata") ||
      !doc["metadata"].IsObject() || !doc["metadata"].HasMember("resourceVersion") ||
      !doc["metadata"]["resourceVersion"].IsString()) {
    return "";
  }
  return doc["metadata"]["resourceVersion"].GetString();
}

// The current object: read, or created when missing (a create that loses a race reads).
StatusOr<std::string> ReadOrCreate(const kube::KubeClient& client, const ObjectWrite& w,
                                   ObjectWriteResult& result) {
  const std::string path = w.collection + "/" + w.name;
  QRM_ASSIGN_OR_RETURN(kube::KubeResponse got, client.Request("GET", path));
  if (got.code == 200) return got.body;
  if (got.code != 404) return kube::ApiError("GET", client.UrlOf(path), got);
  QRM_ASSIGN_OR_RETURN(kube::KubeResponse made,
                       client.Request("POST", w.collection, w.create_body));
  if (made.code == 201 || made.code == 200) {
    result.created = true;
    return made.body;
  }
  if (made.code != 409) return kube::ApiError("POST", client.UrlOf(w.collection), made);
  QRM_ASSIGN_OR_RETURN(got, client.Request("GET", path));  // created by someone else meanwhile
  if (got.code == 200) return got.body;
  return kube::ApiError("GET", client.UrlOf(path), got);
}

}  // namespace

StatusOr<std::string> ReplaceMembers(const std::string& object,
                                     const std::map<std::string, std::string>& members) {
  rapidjson::Document doc;
  doc.Parse(object.c_str());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("the object the server returned is not a JSON object");
  }
  for (const auto& [name, json] : members) {
    rapidjson::Document value(&doc.GetAllocator());
    value.Parse(json.c_str());
    if (value.HasParseError()) {
      return InvalidArgumentError(fmt::format("member {}: not JSON", name));
    }
    if (doc.HasMember(name.c_str())) {
      doc[name.c_str()] = value.Move();
    } else {
      doc.AddMember(rapidjson::Value(name.c_str(), doc.GetAllocator()), value.Move(),
                    doc.GetAllocator());
    }
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

StatusOr<ObjectWriteResult> CreateOrUpdate(const kube::KubeClient& client, const ObjectWrite& w) {
  QRM_RETURN_IF_ERROR(kube::ValidateObjectName(w.name));
  ObjectWriteResult result;
  QRM_ASSIGN_OR_RETURN(std::string current, ReadOrCreate(client, w, result));
  if (result.created && !w.status_subresource) {  // the create wrote everything
    result.resource_version = ResourceVersionOf(current);
    return result;
  }
  const std::string path = w.collection + "/" + w.name + (w.status_subresource ? "/status" : "");
  for (;;) {
    QRM_ASSIGN_OR_RETURN(std::string body, ReplaceMembers(current, w.members));
    QRM_ASSIGN_OR_RETURN(kube::KubeResponse put, client.Request("PUT", path, body));
    if (put.code == 200 || put.code == 201) {
      result.resource_version = ResourceVersionOf(put.body);
      return result;
    }
    if (put.code != 409 || result.conflicts >= w.max_conflicts) {
      return kube::ApiError("PUT", client.UrlOf(path), put);
    }
    ++result.conflicts;  // someone else wrote it: read the new version and apply ours again
    const std::string object_path = w.collection + "/" + w.name;
    QRM_ASSIGN_OR_RETURN(kube::KubeResponse got, client.Request("GET", object_path));
    if (got.code != 200) return kube::ApiError("GET", client.UrlOf(object_path), got);
    current = std::move(got.body);
  }
}

}  // namespace qrm::cluster
