#include "cluster/webhook/json_fields.h"

#include <fmt/format.h>

#include "common/json_string.h"

namespace qrm::webhook {

std::string FieldPath(std::string_view parent, std::string_view name) {
  if (parent.empty()) return std::string(name);
  return fmt::format("{}.{}", parent, name);
}

Status WrongType(std::string_view path, std::string_view what, const rapidjson::Value& found) {
  // Enough of the value to recognize it; a whole object in a message helps nobody.
  constexpr size_t kShown = 80;
  std::string text = JsonText(found);
  if (text.size() > kShown) text = text.substr(0, kShown) + "...";
  return InvalidArgumentError(fmt::format("{}: expected {}, got {}", path, what, text));
}

const rapidjson::Value* Member(const rapidjson::Value& object, std::string_view name) {
  const auto it =
      object.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
  if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

StatusOr<std::string> StringField(const rapidjson::Value& object, std::string_view name,
                                  std::string_view parent) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return std::string();
  if (!v->IsString()) return WrongType(FieldPath(parent, name), "a string", *v);
  return JsonString(*v);
}

StatusOr<std::optional<bool>> BoolField(const rapidjson::Value& object, std::string_view name,
                                        std::string_view parent) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return std::optional<bool>();
  if (!v->IsBool()) return WrongType(FieldPath(parent, name), "true or false", *v);
  return std::optional<bool>(v->GetBool());
}

StatusOr<const rapidjson::Value*> ObjectField(const rapidjson::Value& object, std::string_view name,
                                              std::string_view parent) {
  const rapidjson::Value* v = Member(object, name);
  if (v != nullptr && !v->IsObject()) return WrongType(FieldPath(parent, name), "an object", *v);
  return v;
}

StatusOr<const rapidjson::Value*> ArrayField(const rapidjson::Value& object, std::string_view name,
                                             std::string_view parent) {
  const rapidjson::Value* v = Member(object, name);
  if (v != nullptr && !v->IsArray()) return WrongType(FieldPath(parent, name), "an array", *v);
  return v;
}

}  // namespace qrm::webhook
