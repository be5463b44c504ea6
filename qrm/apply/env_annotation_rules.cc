#include "qrm/apply/env_annotation_rules.h"

#include <cctype>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::apply {
namespace {

bool IsAlnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

bool IsDnsLabel(std::string_view label) {
  if (label.empty() || label.size() > 63 || !IsAlnum(label.front()) || !IsAlnum(label.back())) {
    return false;
  }
  for (char c : label) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return true;
}

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (size_t start = 0;;) {
    const size_t dot = s.find('.', start);
    const std::string_view label =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!IsDnsLabel(label)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool IsQualifiedName(std::string_view key) {
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) return IsNamePart(key);
  return IsDnsSubdomain(key.substr(0, slash)) && IsNamePart(key.substr(slash + 1));
}

bool IsEnvName(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key.front()))) return false;
  for (char c : key) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

Status Refuse(std::string_view resource, std::string_view kind, std::string_view key,
              std::string_view reason) {
  return InvalidArgumentError(
      fmt::format("resource {}: {} key {}: {}", Quote(resource), kind, Quote(key), reason));
}

}  // namespace

Status CheckEnvVar(std::string_view resource, const std::string& key, const std::string& value) {
  if (key.empty()) return Refuse(resource, "env", key, "is empty");
  // An environ entry is "KEY=VALUE\0": '=' would move the split, NUL would truncate it.
  if (key.find('=') != std::string::npos) return Refuse(resource, "env", key, "contains '='");
  if (key.find('\0') != std::string::npos) return Refuse(resource, "env", key, "contains NUL");
  if (!IsEnvName(key)) {
    return Refuse(resource, "env", key,
                  "is not a valid variable name ([-._a-zA-Z][-._a-zA-Z0-9]*)");
  }
  if (value.find('\0') != std::string::npos) {
    return Refuse(resource, "env", key, "value contains NUL");
  }
  if (value.size() > kMaxEnvValueBytes) {
    return Refuse(resource, "env", key,
                  fmt::format("value of {} bytes is larger than the limit of {} bytes",
                              value.size(), kMaxEnvValueBytes));
  }
  return Status::Ok();
}

Status CheckAnnotation(std::string_view resource, const std::string& key,
                       const std::string& value) {
  if (key.empty()) return Refuse(resource, "annotation", key, "is empty");
  if (!IsQualifiedName(key)) {
    return Refuse(resource, "annotation", key,
                  "is not a qualified name ([prefix/]name, name of 1-63 characters "
                  "[A-Za-z0-9._-] starting and ending alphanumeric)");
  }
  if (value.size() > kMaxAnnotationValueBytes) {
    return Refuse(resource, "annotation", key,
                  fmt::format("value of {} bytes is larger than the limit of {} bytes",
                              value.size(), kMaxAnnotationValueBytes));
  }
  return Status::Ok();
}

}  // namespace qrm::apply
