// Role table parsing: the operator's JSON, checked key by key so every mistake is reported
// with the role, the key and the value that was wrong.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/errno_text.h"
#include "common/json_string.h"
#include "common/quote.h"
#include "qos/qos_requirement.h"

namespace qrm::qos {
namespace {

Status RoleError(const std::string& role, std::string_view key, const rapidjson::Value& value,
                 std::string_view expected) {
  return InvalidArgumentError(fmt::format("roles: role {} key \"{}\": invalid value {} ({})",
                                          Quote(role), key, JsonText(value), expected));
}

StatusOr<RoleSpec> ParseRole(const std::string& name, const rapidjson::Value& body) {
  if (!body.IsObject()) {
    return RoleError(name, "", body, "each role must be a JSON object");
  }
  RoleSpec spec;
  spec.name = name;
  bool has_level = false;
  for (const auto& m : body.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    const rapidjson::Value& v = m.value;
    if (key == "qos_level") {
      if (!v.IsString()) return RoleError(name, key, v, "a string");
      auto level = ParseQosLevel(JsonStringView(v));
      if (!level.ok()) {
        return RoleError(name, key, v,
                         "one of dedicated_cores, shared_cores, reclaimed_cores, system_cores");
      }
      spec.level = *level;
      has_level = true;
    } else if (key == "numa_binding" || key == "numa_exclusive") {
      if (!v.IsBool()) return RoleError(name, key, v, "true or false");
      (key == "numa_binding" ? spec.numa_binding : spec.numa_exclusive) = v.GetBool();
    } else if (key == "numa_anti_affinity") {
      if (!v.IsArray()) return RoleError(name, key, v, "an array of role names or \"*\"");
      for (const auto& item : v.GetArray()) {
        if (!item.IsString() || item.GetStringLength() == 0) {
          return RoleError(name, key, v, "an array of non-empty role names or \"*\"");
        }
        spec.numa_anti_affinity.emplace_back(item.GetString(), item.GetStringLength());
      }
    } else {
      return InvalidArgumentError(fmt::format(
          "roles: role {}: unknown key {} (known: qos_level, numa_binding, numa_exclusive, "
          "numa_anti_affinity)",
          Quote(name), Quote(key)));
    }
  }
  if (!has_level) {
    return InvalidArgumentError(
        fmt::format("roles: role {}: missing key \"qos_level\"", Quote(name)));
  }
  if ((spec.numa_binding || spec.numa_exclusive) && spec.level != QosLevel::kDedicated &&
      spec.level != QosLevel::kShared) {
    return InvalidArgumentError(
        fmt::format("roles: role {}: numa_binding/numa_exclusive need qos_level dedicated_cores or "
                    "shared_cores, not {}",
                    Quote(name), QosLevelName(spec.level)));
  }
  return spec;
}

}  // namespace

StatusOr<RoleTable> RoleTable::Parse(std::string_view json) {
  RoleTable table;
  if (json.find_first_not_of(" \t\r\n") == std::string_view::npos) return table;
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseStopWhenDoneFlag>(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(fmt::format("roles: invalid JSON at offset {}: {}",
                                            doc.GetErrorOffset(),
                                            rapidjson::GetParseError_En(doc.GetParseError())));
  }
  if (!doc.IsObject()) {
    return InvalidArgumentError(
        fmt::format("roles: expected a JSON object of role name -> role, got {}", JsonText(doc)));
  }
  for (const auto& m : doc.GetObject()) {
    std::string name(m.name.GetString(), m.name.GetStringLength());
    // "," separates the roles in qrm-advisor's NodeResourceTopology zone attribute.
    if (name.empty() || name == "*" || name.find(',') != std::string::npos) {
      return InvalidArgumentError(fmt::format("roles: invalid role name {}", Quote(name)));
    }
    // JSON allows a key twice; keeping either silently would hide an operator's mistake.
    if (table.roles_.contains(name)) {
      return InvalidArgumentError(
          fmt::format("roles: role {} is defined twice; merge the two definitions", Quote(name)));
    }
    QRM_ASSIGN_OR_RETURN(auto spec, ParseRole(name, m.value));
    table.roles_.emplace(name, std::move(spec));
  }
  for (const auto& [name, spec] : table.roles_) {
    for (const std::string& other : spec.numa_anti_affinity) {
      if (other != "*" && !table.roles_.contains(other)) {
        return InvalidArgumentError(
            fmt::format("roles: role {} key \"numa_anti_affinity\": unknown role {}", Quote(name),
                        Quote(other)));
      }
    }
  }
  return table;
}

const RoleSpec* RoleTable::Find(const std::string& role) const {
  auto it = roles_.find(role);
  return it == roles_.end() ? nullptr : &it->second;
}

bool RoleTable::AntiAffine(const std::string& a, const std::string& b) const {
  if (a.empty() || b.empty()) return false;
  auto lists = [&](const std::string& from, const std::string& to) {
    const RoleSpec* spec = Find(from);
    if (spec == nullptr) return false;
    return std::any_of(spec->numa_anti_affinity.begin(), spec->numa_anti_affinity.end(),
                       [&](const std::string& r) { return r == to || (r == "*" && from != to); });
  };
  return lists(a, b) || lists(b, a);
}

StatusOr<RoleTable> LoadRoleTable(std::string_view roles_json, const std::string& roles_file) {
  const bool has_json = roles_json.find_first_not_of(" \t\r\n") != std::string_view::npos;
  if (has_json && !roles_file.empty()) {
    return InvalidArgumentError(fmt::format(
        "roles and roles_file {} are both set; give the role table once", Quote(roles_file)));
  }
  if (roles_file.empty()) return RoleTable::Parse(roles_json);
  std::ifstream in(roles_file);
  if (!in) {
    return InvalidArgumentError(
        fmt::format("roles_file: cannot read {}: {}", Quote(roles_file), ErrnoText(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto table = RoleTable::Parse(text.str());
  if (!table.ok()) return table.status().WithContext(fmt::format("roles_file {}", roles_file));
  return table;
}

}  // namespace qrm::qos
