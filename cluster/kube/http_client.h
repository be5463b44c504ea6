// A synchronous HTTP/1.1 client (Boost.Beast) for the Kubernetes API: http and https, the
// server's certificate verified against a CA bundle and the host name or IP address, an
// optional client certificate, one deadline for the whole exchange. One connection per
// request ("Connection: close"): the API is called rarely and simply here, correctness first.
// Never throws; every error names the method and the URL.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace qrm::kube {

struct Url {
  bool tls = false;       // https
  std::string host;       // a name, an IPv4 address or an IPv6 address (without brackets)
  uint16_t port = 0;      // defaults to 443 / 80
  std::string base_path;  // "" or "/prefix" (no trailing slash): put before every request path

  std::string HostPort() const;  // "host:port", "[::1]:port"
  std::string ToString() const;  // "https://host:port/prefix"
};

// "http(s)://host[:port][/path]"; no user info, query or fragment. kInvalidArgument naming
// the URL otherwise.
StatusOr<Url> ParseUrl(std::string_view url);

struct TlsConfig {
  bool insecure_skip_verify = false;
  std::string ca_pem;           // trusted CAs; empty: the system's trust store
  std::string client_cert_pem;  // with client_key_pem, or both empty
  std::string client_key_pem;
  std::string server_name;  // verified (and sent as SNI) instead of the URL's host when set
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, after the URL's base path
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

// Bodies larger than this are refused (kResourceExhausted): a list of every pod of a big
// node is a few MiB.
inline constexpr size_t kMaxResponseBytes = 64u << 20;

// One request on a new connection. Errors: kDeadlineExceeded past `timeout`, kUnavailable when
// the server cannot be reached or its certificate is not trusted ("... certificate verify
// failed: ..."), kInvalidArgument for a bad method, kResourceExhausted for a body too large.
StatusOr<HttpResponse> HttpCall(const Url& url, const TlsConfig& tls, const HttpRequest& request,
                                std::chrono::milliseconds timeout);

// A streamed body (a watch): called with each piece as it arrives, in order; pieces split the
// body anywhere. Returning false ends the exchange.
using BodySink = std::function<bool(std::string_view piece)>;

struct StreamTimeouts {
  std::chrono::milliseconds connect{30000};  // until the answer's header has arrived
  std::chrono::milliseconds idle{330000};    // the longest wait for the next piece of body
};

// One request whose 2xx body goes to `sink` as it arrives; a non-2xx body is read whole (up
// to kMaxResponseBytes) into the answer and never given to `sink`. It ends when the server
// ends the body or `sink` returns false (the answer, its body empty for 2xx), when `stop` is
// requested (kCancelled, within 100 ms, from any thread), or past a timeout
// (kDeadlineExceeded); other errors as HttpCall's.
StatusOr<HttpResponse> HttpStream(const Url& url, const TlsConfig& tls, const HttpRequest& request,
                                  StreamTimeouts timeouts, const BodySink& sink,
                                  std::stop_token stop);

}  // namespace qrm::kube
