#include "cluster/kube/kube_names.h"

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::kube {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// One DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (const char c : s) {
    if (!IsAlnum(c) && c != '-') return false;
  }
  return true;
}

Status Invalid(std::string_view field, std::string_view name, std::string_view rule) {
  return InvalidArgumentError(fmt::format("{}: {}: {}", field, Quote(name), rule));
}

}  // namespace

Status ValidateNamespace(std::string_view name, std::string_view field) {
  if (IsLabel(name)) return Status::Ok();
  return Invalid(field, name,
                 "not a DNS-1123 label (1 to 63 of a-z, 0-9 and '-', alphanumeric at both ends)");
}

Status ValidateObjectName(std::string_view name, std::string_view field) {
  bool ok = !name.empty() && name.size() <= 253;
  for (size_t start = 0; ok && start <= name.size();) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    const std::string_view part = name.substr(start, dot - start);
    ok = !part.empty() && IsAlnum(part.front()) && IsAlnum(part.back());
    for (const char c : part) ok = ok && (IsAlnum(c) || c == '-');
    start = dot + 1;
  }
  if (ok) return Status::Ok();
  return Invalid(field, name,
                 "not a DNS-1123 subdomain (1 to 253 of a-z, 0-9, '-' and '.', alphanumeric "
                 "around each '.' and at both ends)");
}

}  // namespace qrm::kube
