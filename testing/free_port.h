// A TCP port on 127.0.0.1 that was free a moment ago, for a child process that must be told its
// listening address before it starts (a small race with other binds is accepted in tests).
#pragma once

namespace qrm::testing {

// 0 when no port could be had.
int FreeLoopbackPort();

}  // namespace qrm::testing
