// Typed reads of JSON object members by Go's encoding/json rules (an absent or null member is
// the zero value), with errors naming the member's full path and what was found there.
// Internal to cluster/webhook.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "common/status.h"

namespace qrm::webhook {

// "request.kind" + "group" -> "request.kind.group".
std::string FieldPath(std::string_view parent, std::string_view name);

// kInvalidArgument: "<path>: expected <what>, got <the value, shortened>".
Status WrongType(std::string_view path, std::string_view what, const rapidjson::Value& found);

// The member `name` of `object` (which must be an object), nullptr when absent or null.
const rapidjson::Value* Member(const rapidjson::Value& object, std::string_view name);

StatusOr<std::string> StringField(const rapidjson::Value& object, std::string_view name,
                                  std::string_view parent);
StatusOr<std::optional<bool>> BoolField(const rapidjson::Value& object, std::string_view name,
                                        std::string_view parent);
// nullptr when absent or null.
StatusOr<const rapidjson::Value*> ObjectField(const rapidjson::Value& object, std::string_view name,
                                              std::string_view parent);
StatusOr<const rapidjson::Value*> ArrayField(const rapidjson::Value& object, std::string_view name,
                                             std::string_view parent);

}  // namespace qrm::webhook
