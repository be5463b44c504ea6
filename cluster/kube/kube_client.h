// KubeClient: requests to the Kubernetes API server with a ClusterConfig's credentials.
//
// The token file, the CA file and the client certificate files are read again at every
// request, so rotated credentials are used as soon as the kubelet writes them. An answer is
// returned whatever its HTTP code; only transport errors (and bad arguments) are a Status.
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/kube/http_client.h"
#include "cluster/kube/kube_config.h"
#include "common/status.h"

namespace qrm::kube {

struct KubeResponse {
  int code = 0;  // the HTTP status code
  std::string body;
  std::string content_type;
};

class KubeClient {
 public:
  // Checks the server URL and that exactly the credentials' shapes are usable; files are read
  // at each request, not here.
  static StatusOr<KubeClient> Create(ClusterConfig config);

  // `path` is absolute ("/api/v1/namespaces/x/pods/y/eviction", with an optional query) and
  // printable ASCII without blanks; `content_type` is sent when `body` is not empty. Errors
  // name the method and the URL.
  StatusOr<KubeResponse> Request(std::string_view method, std::string_view path,
                                 std::string_view body = {},
                                 std::string_view content_type = "application/json") const;

  // A GET whose 2xx body is streamed to `sink` (a watch: HttpStream); a non-2xx answer comes
  // back whole. The connection timeout is the configuration's request timeout.
  StatusOr<KubeResponse> Stream(std::string_view path, std::chrono::milliseconds idle_timeout,
                                const BodySink& sink, std::stop_token stop) const;

  // The full URL of `path`, for messages.
  std::string UrlOf(std::string_view path) const { return url_.ToString() + std::string(path); }
  const ClusterConfig& config() const { return config_; }

 private:
  KubeClient(ClusterConfig config, Url url) : config_(std::move(config)), url_(std::move(url)) {}

  StatusOr<TlsConfig> LoadTls() const;
  StatusOr<std::string> LoadToken() const;
  // The request with the credentials: the TLS configuration and the headers.
  StatusOr<std::pair<TlsConfig, HttpRequest>> Prepare(std::string_view method,
                                                      std::string_view path, std::string_view body,
                                                      std::string_view content_type) const;

  ClusterConfig config_;
  Url url_;
};

// A Kubernetes Status object (the body of most API errors).
struct ApiStatus {
  std::string status;   // "Failure", "Success"
  std::string reason;   // "NotFound", "TooManyRequests", ...
  std::string message;  // human readable
  int code = 0;
  std::vector<std::string> causes;  // details.causes[].message
};

// The body as a Status object (kind "Status"), or nullopt when it is not one.
std::optional<ApiStatus> ParseApiStatus(std::string_view body);

// An answer in one line: "404 NotFound: pods \"x\" not found", or the code and the start of a
// body that is not a Status object.
std::string DescribeAnswer(const KubeResponse& response);

// A non-2xx answer as a Status naming the method and URL, with a code that fits: 400/422
// kInvalidArgument, 401/403 kPermissionDenied, 404 kNotFound, 409 kAborted, 429
// kResourceExhausted, 503 kUnavailable, 504 kDeadlineExceeded, others kInternal/kUnknown.
Status ApiError(std::string_view method, std::string_view url, const KubeResponse& response);

}  // namespace qrm::kube
