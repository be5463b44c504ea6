#include "cluster/kube/url_query.h"

#include <fmt/format.h>

namespace qrm::kube {

std::string QueryEscaped(std::string_view value) {
  std::string out;
  for (const char c : value) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.' || c == '~';
    out += plain ? std::string(1, c) : fmt::format("%{:02X}", static_cast<unsigned char>(c));
  }
  return out;
}

}  // namespace qrm::kube
