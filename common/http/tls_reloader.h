// TlsReloader: the server's TLS context, loaded from a certificate and key file pair and
// reloaded when either file changes, so a certificate rotated on disk (cert-manager, a
// kubelet-style rotation, an operator's script) is served without a restart.
//
// Internal to common/http. Not thread-safe: Load runs before the server thread starts and
// Current only on that thread (on accept).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "common/http/http_server.h"
#include "common/status.h"

namespace qrm::http {

// A TLS server context (TLS 1.2 and later) serving `files`. kInvalidArgument naming the file
// that cannot be read or is not PEM of its kind, or naming both when the key does not belong
// to the certificate.
StatusOr<std::shared_ptr<boost::asio::ssl::context>> LoadTlsContext(const TlsFiles& files);

class TlsReloader {
 public:
  TlsReloader(TlsFiles files, std::chrono::milliseconds check_interval);

  // The first load; its error is the server's Start error.
  Status Load();

  // The context for a new connection. At most once per check interval it looks at the files'
  // modification time, size and inode; when one changed it loads the new pair. A pair that
  // does not load leaves the old context serving and is logged once (until the files change
  // again), since a rotation may write the certificate and the key one after the other.
  std::shared_ptr<boost::asio::ssl::context> Current();

 private:
  // What identifies a version of both files; empty when one cannot be stat'ed.
  std::string Stamp() const;

  const TlsFiles files_;
  const std::chrono::milliseconds check_interval_;
  std::shared_ptr<boost::asio::ssl::context> context_;
  std::string loaded_stamp_;  // the files as last tried (loaded or refused)
  std::chrono::steady_clock::time_point next_check_;
};

}  // namespace qrm::http
