// The CRI socket file: making room for it, and giving it the runtime socket's permissions
// (whoever may talk to the runtime may talk to the shim, and nobody else).
#pragma once

#include <optional>
#include <string>

#include <sys/types.h>

#include "common/status.h"

namespace qrm::shim {

// Makes `path` ready for a new listening socket: creates its directory (mode 0755) if
// missing and removes a stale socket (one nobody accepts connections on, e.g. from a crashed
// qrm-host). A socket something still listens on is kFailedPrecondition, any other kind of
// file kAlreadyExists; both name the path and are left alone.
Status PrepareSocketPath(const std::string& path);

// "docker" or "998" -> gid; kInvalidArgument naming `flag` and the value if unknown.
StatusOr<gid_t> ResolveGroup(const std::string& flag, const std::string& group);

// Gives the socket at `path` the owner of `like` (the runtime's socket) and its group and
// mode, with `mode` / `group` replacing those when set.
Status MatchSocketPermissions(const std::string& path, const std::string& like,
                              std::optional<mode_t> mode, std::optional<gid_t> group);

}  // namespace qrm::shim
