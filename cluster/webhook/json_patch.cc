#include "cluster/webhook/json_patch.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster/kube/json_pointer.h"

namespace qrm::webhook {

std::string AnnotationPath(std::string_view key) {
  return "/metadata/annotations/" + kube::EscapeJsonPointer(key);
}

std::string JsonStringValue(std::string_view text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string EncodePatch(const std::vector<PatchOp>& ops) {
  std::string out = "[";
  for (const PatchOp& op : ops) {
    if (out.size() > 1) out += ',';
    out += "{\"op\":" + JsonStringValue(op.op) + ",\"path\":" + JsonStringValue(op.path) +
           ",\"value\":" + op.value_json + "}";
  }
  return out + "]";
}

}  // namespace qrm::webhook
