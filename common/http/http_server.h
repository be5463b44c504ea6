// HttpServer: a tiny HTTP/1.1 server (Boost.Beast) for /metrics, /healthz and /readyz.
//
// It serves GET requests from a fixed route table on one thread of its own, so a slow
// scraper never touches the threads that admit containers. A failed accept (out of
// descriptors, ...) never stops it: it is logged (rate-limited), counted in
// qrm_http_accept_errors_total and retried after a back-off of 10 ms doubling to 1 s. Handlers must
// be quick and thread-safe (they run on the server thread while the rest of the process works).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/status.h"

namespace qrm::http {

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using Handler = std::function<Response()>;

// Bounds on open connections, so that nobody able to reach the port can use up the process's
// descriptors (each connection is one; an idle one is closed after 30 s). A connection over a
// bound is closed at once and counted in qrm_http_connections_refused_total{reason}.
struct ConnectionLimits {
  int max_per_address = 16;  // per remote IP address
  int max_total = 128;
};

class HttpServer {
 public:
  // `address` is "IP:PORT" ("127.0.0.1:9464", "[::1]:9464"); port 0 picks a free port.
  HttpServer(std::string address, std::map<std::string, Handler> routes,
             ConnectionLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the server thread. kInvalidArgument naming the address when it does
  // not parse; kUnavailable when it cannot be bound.
  Status Start();
  void Stop();       // idempotent
  int port() const;  // the bound port (after Start)

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The standard routes: /metrics from the default registry, /healthz (always ok while the
// process serves), /readyz (ok when `ready` returns true, 503 otherwise).
std::map<std::string, Handler> StandardRoutes(std::function<bool()> ready);

}  // namespace qrm::http
