#include "cluster/kube/json_pointer.h"

namespace qrm::kube {

std::string EscapeJsonPointer(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace qrm::kube
