#include "advisor/pools/pool_control_file.h"

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "checkpoint/file_io.h"
#include "common/quote.h"

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

// A JSON value as it was written, for messages.
std::string JsonText(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return buffer.GetString();
}

StatusOr<std::optional<int>> SizeMember(const rapidjson::Value& object, const char* key,
                                        const std::string& path) {
  const auto it = object.FindMember(key);
  if (it == object.MemberEnd()) return std::optional<int>();
  const rapidjson::Value& v = it->value;
  if (v.IsString() && std::string_view(v.GetString()) == "auto") return std::optional<int>();
  if (!v.IsInt() || v.GetInt() < 0) {
    return DataLossError(fmt::format("pool control {}: {}: invalid value {} (a whole number >= 0)",
                                     path, key, JsonText(v)));
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
  for (const auto& member : doc.GetObject()) {
    const std::string_view key(member.name.GetString(), member.name.GetStringLength());
    if (key != "shared" && key != "reclaimed") {
      // The plugin refuses such a file too: whatever it holds is not in force.
      return DataLossError(fmt::format("pool control {}: unknown key {}", path, Quote(key)));
    }
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
