#include "advisor/pools/pool_control_file.h"

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "checkpoint/file_io.h"

namespace qrm::advisor {

Status WriteSharedPoolSize(const std::string& path, int shared, int pool_cpus) {
  if (shared < 1) {
    return InvalidArgumentError(
        fmt::format("pool control {}: shared {} must be >= 1", path, shared));
  }
  checkpoint::WriteOptions options;
  options.file_mode = 0644;  // the plugin may run as another user; the content is no secret
  const std::string content = shared >= pool_cpus ? std::string("{\"reclaimed\":0}\n")
                                                  : fmt::format("{{\"shared\":{}}}\n", shared);
  auto fd = checkpoint::file_io::ReplaceFile(path, content, options, /*keep_open=*/false);
  return fd.status();
}

namespace {

StatusOr<std::optional<int>> SizeMember(const rapidjson::Value& object, const char* key,
                                        const std::string& path) {
  const auto it = object.FindMember(key);
  if (it == object.MemberEnd()) return std::optional<int>();
  const rapidjson::Value& v = it->value;
  if (v.IsString() && std::string_view(v.GetString()) == "auto") return std::optional<int>();
  if (!v.IsInt() || v.GetInt() < 0) {
    return DataLossError(fmt::format("pool control {}: {} is not a whole number >= 0", path, key));
  }
  return std::optional<int>(v.GetInt());
}

}  // namespace

StatusOr<PoolControlContent> ReadPoolControl(const std::string& path) {
  auto text = checkpoint::file_io::ReadWholeFile(path, "pool control file");
  if (!text.ok()) return text.status();
  rapidjson::Document doc;
  doc.Parse(text->data(), text->size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return DataLossError(fmt::format("pool control {}: not a JSON object", path));
  }
  PoolControlContent out;
  auto shared = SizeMember(doc, "shared", path);
  if (!shared.ok()) return shared.status();
  auto reclaimed = SizeMember(doc, "reclaimed", path);
  if (!reclaimed.ok()) return reclaimed.status();
  out.shared = *shared;
  out.reclaimed = *reclaimed;
  return out;
}

}  // namespace qrm::advisor
