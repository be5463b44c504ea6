#include "common/errno_text.h"

#include <cstring>

namespace qrm {

std::string ErrnoText(int err) {
  char buffer[256];
  // _GNU_SOURCE (g++ and clang++ define it) selects the GNU strerror_r, which returns the text:
  // either a static string of libc's or `buffer`, filled and NUL-terminated.
  return ::strerror_r(err, buffer, sizeof(buffer));
}

}  // namespace qrm
