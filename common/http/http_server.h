// HttpServer: a tiny HTTP/1.1 server (Boost.Beast) for /metrics, /healthz and /readyz, and for
// small request/answer APIs (an admission webhook) over plain HTTP or TLS.
//
// It serves a fixed route table on one thread of its own, so a slow client never touches the
// threads that admit containers. A failed accept (out of descriptors, ...) never stops it: it
// is logged (rate-limited), counted in qrm_http_accept_errors_total and retried after a
// back-off of 10 ms doubling to 1 s. Handlers must be quick and thread-safe (they run on the
// server thread while the rest of the process works).
//
// Reading one request (headers and body, and the TLS handshake before it) has a deadline
// (`read_timeout`, 30 s), so a client that trickles bytes holds its connection slot for no
// longer than that; bodies are bounded (`max_body_bytes`, 413 beyond). With `tls`, the
// certificate and key are loaded at Start and reloaded when their files change (checked at
// most every `tls_reload_interval`, on accept), so a rotated certificate is served without a
// restart; a new pair that does not load keeps the old one serving and is logged once.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace qrm::http {

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// What a route's handler receives.
struct Request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, as sent: "/mutate?timeout=10s"
  std::string content_type;
  std::string body;
};

using Handler = std::function<Response()>;
using RequestHandler = std::function<Response(const Request&)>;

// A path's handler and the methods it takes; any other method is answered 405 with an Allow
// header. HEAD is answered as GET without the body when GET is allowed.
struct Route {
  std::vector<std::string> methods;  // e.g. {"POST"}
  RequestHandler handler;
};

// Bounds on open connections, so that nobody able to reach the port can use up the process's
// descriptors (each connection is one; an idle one is closed after 30 s). A connection over a
// bound is closed at once and counted in qrm_http_connections_refused_total{reason}.
struct ConnectionLimits {
  int max_per_address = 16;  // per remote IP address
  int max_total = 128;
};

// PEM files: the certificate chain (leaf first) and its private key.
struct TlsFiles {
  std::string cert_file;
  std::string key_file;
};

struct ServerOptions {
  ConnectionLimits limits;
  size_t max_body_bytes = 4 << 20;
  std::chrono::milliseconds read_timeout{30000};  // per request, and idle between requests
  std::optional<TlsFiles> tls;                    // plain HTTP without
  std::chrono::milliseconds tls_reload_interval{10000};
  // The configuration key the address came from, named in errors.
  std::string address_key = "metrics_address";
};

class HttpServer {
 public:
  // `address` is "IP:PORT" ("127.0.0.1:9464", "[::1]:9464"); port 0 picks a free port.
  // GET routes (HEAD too), plain HTTP.
  HttpServer(std::string address, std::map<std::string, Handler> routes,
             ConnectionLimits limits = {});
  HttpServer(std::string address, std::map<std::string, Route> routes, ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the server thread. kInvalidArgument naming the address key and value
  // when it does not parse, or naming the TLS file that cannot be read, is not PEM of its kind
  // or does not match the other; kUnavailable when the address cannot be bound.
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
