// The text of an errno value, safe to call from any thread.
//
// std::strerror may return a buffer that another thread's call overwrites (POSIX leaves it
// unspecified), and every qrm daemon reports I/O errors from several threads at once.
#pragma once

#include <string>

namespace qrm {

// "No such file or directory" for ENOENT; "Unknown error N" for values libc does not know.
std::string ErrnoText(int err);

}  // namespace qrm
