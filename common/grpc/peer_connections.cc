#include "common/grpc/peer_connections.h"

#include <algorithm>

#include <sys/stat.h>

namespace qrm {

void PeerConnections::Prune(std::vector<Entry>& entries) {
  std::erase_if(entries, [](const Entry& e) {
    struct stat st {};
    return ::fstat(e.fd, &st) != 0 || st.st_dev != e.dev || st.st_ino != e.ino;
  });
}

bool PeerConnections::TryAdd(uid_t uid, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  std::vector<Entry>& entries = open_[uid];
  if (max_per_peer_ > 0 && static_cast<int>(entries.size()) >= max_per_peer_) {
    Prune(entries);
    if (static_cast<int>(entries.size()) >= max_per_peer_) return false;
  }
  entries.push_back({fd, st.st_dev, st.st_ino});
  return true;
}

int PeerConnections::Count(uid_t uid) {
  auto it = open_.find(uid);
  if (it == open_.end()) return 0;
  Prune(it->second);
  return static_cast<int>(it->second.size());
}

void PeerConnections::PruneAll() {
  for (auto it = open_.begin(); it != open_.end();) {
    Prune(it->second);
    it = it->second.empty() ? open_.erase(it) : std::next(it);
  }
}

}  // namespace qrm
