#include "cluster/kube/watch_events.h"

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/json_string.h"
#include "common/quote.h"

namespace qrm::kube {
namespace {

using rapidjson::Value;

// The string member `name` of `object`: "" when absent or null, an error for another type.
StatusOr<std::string> OptionalString(const Value& object, const char* name,
                                     std::string_view where) {
  const auto it = object.FindMember(name);
  if (it == object.MemberEnd() || it->value.IsNull()) return std::string();
  if (!it->value.IsString()) {
    return InvalidArgumentError(fmt::format("{}.{}: not a string", where, name));
  }
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

const Value* Member(const Value& object, const char* name) {
  const auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

// The key and resourceVersion of an object; `need_name` false for a bookmark.
StatusOr<ObjectIdentity> IdentityOf(const Value& object, std::string_view where, bool need_name) {
  if (!object.IsObject()) return InvalidArgumentError(fmt::format("{}: not an object", where));
  const Value* meta = Member(object, "metadata");
  if (meta == nullptr || !meta->IsObject()) {
    return InvalidArgumentError(fmt::format("{}.metadata: missing", where));
  }
  const std::string at = fmt::format("{}.metadata", where);
  QRM_ASSIGN_OR_RETURN(std::string name, OptionalString(*meta, "name", at));
  QRM_ASSIGN_OR_RETURN(std::string ns, OptionalString(*meta, "namespace", at));
  ObjectIdentity id;
  QRM_ASSIGN_OR_RETURN(id.resource_version, OptionalString(*meta, "resourceVersion", at));
  if (need_name && name.empty()) return InvalidArgumentError(fmt::format("{}.name: missing", at));
  id.key = ns.empty() ? name : ns + "/" + name;
  return id;
}

std::optional<WatchEventType> TypeOf(std::string_view text) {
  if (text == "ADDED") return WatchEventType::kAdded;
  if (text == "MODIFIED") return WatchEventType::kModified;
  if (text == "DELETED") return WatchEventType::kDeleted;
  if (text == "BOOKMARK") return WatchEventType::kBookmark;
  if (text == "ERROR") return WatchEventType::kError;
  return std::nullopt;
}

}  // namespace

StatusOr<ListPage> ParseListPage(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("list: the body is not a JSON object");
  }
  ListPage page;
  if (const Value* meta = Member(doc, "metadata"); meta != nullptr && meta->IsObject()) {
    QRM_ASSIGN_OR_RETURN(page.resource_version,
                         OptionalString(*meta, "resourceVersion", "list.metadata"));
    QRM_ASSIGN_OR_RETURN(page.continue_token, OptionalString(*meta, "continue", "list.metadata"));
  }
  const Value* items = Member(doc, "items");
  if (items == nullptr || items->IsNull()) return page;  // an empty list may say null
  if (!items->IsArray()) return InvalidArgumentError("list.items: not an array");
  for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
    const std::string where = fmt::format("list.items[{}]", i);
    QRM_ASSIGN_OR_RETURN(ObjectIdentity id, IdentityOf((*items)[i], where, true));
    page.items.push_back({std::move(id), JsonText((*items)[i])});
  }
  return page;
}

StatusOr<WatchEvent> ParseWatchEvent(std::string_view line) {
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError(
        fmt::format("watch event {}: not a JSON object", Quote(line.substr(0, 200))));
  }
  QRM_ASSIGN_OR_RETURN(const std::string type_text, OptionalString(doc, "type", "watch event"));
  const std::optional<WatchEventType> type = TypeOf(type_text);
  if (!type) {
    return InvalidArgumentError(
        fmt::format("watch event type {}: not ADDED, MODIFIED, "
                    "DELETED, BOOKMARK or ERROR",
                    Quote(type_text)));
  }
  const Value* object = Member(doc, "object");
  if (object == nullptr || !object->IsObject()) {
    return InvalidArgumentError(fmt::format("watch event {}: object: missing", type_text));
  }
  WatchEvent event;
  event.type = *type;
  event.json = JsonText(*object);
  if (*type == WatchEventType::kError) {
    event.error = ParseApiStatus(event.json);
    if (!event.error) return InvalidArgumentError("watch event ERROR: object is not a Status");
    return event;
  }
  const bool need_name = *type != WatchEventType::kBookmark;
  QRM_ASSIGN_OR_RETURN(
      event.id, IdentityOf(*object, fmt::format("watch event {}.object", type_text), need_name));
  return event;
}

StatusOr<std::vector<std::string>> LineSplitter::Feed(std::string_view piece) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < piece.size()) {
    const size_t newline = piece.find('\n', start);
    if (newline == std::string_view::npos) {
      partial_.append(piece.substr(start));
      break;
    }
    partial_.append(piece.substr(start, newline - start));
    if (!partial_.empty() && partial_ != "\r") lines.push_back(std::move(partial_));
    partial_.clear();
    start = newline + 1;
  }
  if (partial_.size() > max_line_) {
    return ResourceExhaustedError(
        fmt::format("watch stream: a line longer than {} bytes", max_line_));
  }
  return lines;
}

}  // namespace qrm::kube
