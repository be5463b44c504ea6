// PeerConnections: how many connections each peer uid holds on a listener, for the
// per-peer bound of PeerCheckedListener.
//
// gRPC owns and closes an accepted descriptor without telling anyone, so each one is
// remembered with the device and inode of its socket: a descriptor that no longer refers to
// that socket (closed, or reused for something else) is a connection that went away. A socket
// inode is unique while the socket lives, so a reused descriptor number is never mistaken
// for the old connection. Used by one thread (the accept loop).
#pragma once

#include <map>
#include <vector>

#include <sys/types.h>

namespace qrm {

class PeerConnections {
 public:
  // 0: unlimited.
  explicit PeerConnections(int max_per_peer) : max_per_peer_(max_per_peer) {}

  // Records `fd` (a connected socket) for `uid`, unless the uid already holds max_per_peer
  // live connections: then returns false and records nothing.
  bool TryAdd(uid_t uid, int fd);
  // Live connections of `uid`.
  int Count(uid_t uid);
  // Forgets every connection that went away (bounded memory when peers leave for good).
  void PruneAll();

 private:
  struct Entry {
    int fd;
    dev_t dev;
    ino_t ino;
  };
  static void Prune(std::vector<Entry>& entries);

  const int max_per_peer_;
  std::map<uid_t, std::vector<Entry>> open_;
};

}  // namespace qrm
