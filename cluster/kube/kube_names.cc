#include "cluster/kube/kube_names.h"

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::kube {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

Status Invalid(std::string_view field, std::string_view name, std::string_view rule) {
  return InvalidArgumentError(fmt::format("{}: {}: {}", field, Quote(name), rule));
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])? of any length.
bool IsLabelShape(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (const char c : s) {
    if (!IsAlnum(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

bool IsDnsLabel(std::string_view name) {
  return name.size() <= 63 && IsLabelShape(name);
}

bool IsDnsSubdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (size_t start = 0;;) {
    const size_t dot = name.find('.', start);
    if (!IsLabelShape(name.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

Status ValidateNamespace(std::string_view name, std::string_view field) {
  if (IsDnsLabel(name)) return Status::Ok();
  return Invalid(field, name,
                 "not a DNS-1123 label (1 to 63 of a-z, 0-9 and '-', alphanumeric at both ends)");
}

Status ValidateObjectName(std::string_view name, std::string_view field) {
  if (IsDnsSubdomain(name)) return Status::Ok();
  return Invalid(field, name,
                 "not a DNS-1123 subdomain (1 to 253 of a-z, 0-9, '-' and '.', alphanumeric "
                 "around each '.' and at both ends)");
}

}  // namespace qrm::kube
