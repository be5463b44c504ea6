// Unix socket files for qrm's gRPC servers: where they may be created and who may use them.
//
// Every server (CRI shim, pod-resources, admin, plugin registration, plugins) prepares its
// path the same way: the parent directory is created with a restrictive mode if missing; a
// socket file left by a crashed run is removed, but any other kind of file in the way is an
// error (never deleted); after the server binds, the socket gets mode 0600 (or 0660 with a
// configured group) so only root (or that group) can connect. Directories qrm creates for its
// sockets are 0700 (0750 with a group, so the group can reach the socket inside), every level
// it creates, not only the last.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <sys/types.h>

#include "common/status.h"

namespace qrm {

struct SocketPermissions {
  mode_t mode = 0600;
  std::optional<gid_t> group;  // chown to this group (keep the owner); with mode 0660
  mode_t dir_mode = 0700;      // for parent directories qrm creates
};

// The permissions every qrm-owned socket gets: 0600 in 0700 directories, or with `group`
// 0660 and 0750 with that group (the socket and the directories qrm creates).
SocketPermissions SocketPermissionsFor(std::optional<gid_t> group);

// Creates `dir` and its missing parents, each with `mode` (whatever the umask) and, if set,
// `group`; directories that exist are left as they are.
Status CreateDirectories(const std::filesystem::path& dir, mode_t mode, std::optional<gid_t> group);

// Creates the parent directories (mode `dir_mode`) and removes a stale socket at `path`.
// kFailedPrecondition if a non-socket file is there; kInvalidArgument if the path is longer
// than a sockaddr_un can hold.
Status PrepareSocketPath(const std::string& path, mode_t dir_mode = 0750);
// The same with the directory mode and group of `perms`: a directory qrm creates gets
// perms.dir_mode and, with a group, that group.
Status PrepareSocketPath(const std::string& path, const SocketPermissions& perms);

// A non-blocking, close-on-exec Unix stream socket bound at `path` (which must be free) and
// listening; the caller owns the descriptor.
// True if something accepts connections on the Unix socket at `path` (also when that cannot
// be told: callers use it to leave a socket alone).
bool SomeoneListens(const std::string& path);

StatusOr<int> ListenUnixSocket(const std::string& path, int backlog = 128);

// Applies the permissions to the bound socket file.
Status ApplySocketPermissions(const std::string& path, const SocketPermissions& perms);

// "unix:///run/x.sock", "unix:/run/x.sock" or "/run/x.sock" -> "/run/x.sock". Anything else
// (tcp, relative paths, empty) is kInvalidArgument naming `flag` and the value.
StatusOr<std::string> ParseUnixEndpoint(const std::string& endpoint, const std::string& flag);

// Looks a group up by name or numeric id; kInvalidArgument naming `flag` when unknown.
StatusOr<gid_t> ResolveGroup(const std::string& name_or_id, const std::string& flag);

}  // namespace qrm
