// TestApiServer: a Kubernetes API server inside the test process, for the API client's tests
// (no control plane exists on a test machine). It speaks the real REST paths and JSON over
// HTTP or HTTPS (a CA and server certificate made in process, for 127.0.0.1), requires a
// bearer token (or, when enabled, a client certificate signed by its CA) and answers 401 with
// a Status object otherwise.
//
// Watches: a route answers with a WatchFeed (ApiResponse::feed), streamed chunked until it
// closes; object_collection.h makes the list/watch semantics.
// Routes are a table of method + path pattern ("/api/v1/namespaces/{}/pods/{}/eviction", each
// {} one path segment); tests and later issues add their own (lists, watches). Built in:
//  * POST .../pods/{name}/eviction: the Eviction subresource, with the API server's checks
//    (JSON content type, apiVersion policy/v1, kind Eviction, metadata.name and namespace
//    matching the path: 400 otherwise), answering as scripted per pod (201, 429 for a
//    disruption budget, 404, 500) and recording every request;
//  * GET of any path stored with PutObject: that object (a tiny object store).
// Handlers run on the server's thread; everything here is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "testing/kube/test_certificates.h"
#include "testing/kube/watch_feed.h"

namespace qrm::testing {

struct ApiRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query
  std::string query;   // after '?', or empty
  std::string content_type;
  std::string body;
  std::vector<std::string> params;  // the pattern's {} segments, in order
  bool client_certificate = false;  // authenticated by a verified client certificate
};

struct ApiResponse {
  int code = 200;
  std::string body;
  std::string content_type = "application/json";
  // Set: a streamed answer (a watch). The header goes out at once, then, chunked, whatever the
  // feed is given, until it closes (the connection then ends, as a watch's does).
  std::shared_ptr<WatchFeed> feed;
};

using RouteHandler = std::function<ApiResponse(const ApiRequest&)>;

// A Kubernetes Status object answer: {"kind":"Status","apiVersion":"v1","metadata":{},
// "status":"Failure"|"Success","message":...,"reason":...,"code":...}.
ApiResponse StatusAnswer(int code, std::string_view reason, std::string_view message);

enum class EvictionAnswer {
  kEvict,        // 201 Success
  kBudget,       // 429 TooManyRequests, "Cannot evict pod as it would violate the pod's
                 // disruption budget." with a DisruptionBudget cause
  kNotFound,     // 404 NotFound: pods "<name>" not found
  kServerError,  // 500 InternalError
};

struct RecordedEviction {
  std::string pod_namespace;  // from the path
  std::string name;
  std::optional<int64_t> grace_period_seconds;  // deleteOptions.gracePeriodSeconds
  bool dry_run = false;                         // deleteOptions.dryRun == ["All"]
  std::string content_type;
  std::string body;
  int code = 0;  // what the server answered
};

struct TestApiServerOptions {
  bool tls = false;
  std::string token = "test-token";
  // With tls: ask for a client certificate; one signed by the server's CA authenticates too.
  bool accept_client_certificates = false;
};

class TestApiServer {
 public:
  explicit TestApiServer(TestApiServerOptions options = {});
  ~TestApiServer();
  TestApiServer(const TestApiServer&) = delete;
  TestApiServer& operator=(const TestApiServer&) = delete;

  // Makes the certificates (tls), listens on 127.0.0.1 (a free port) and serves on a thread.
  Status Start();
  void Stop();  // idempotent; the destructor stops too

  std::string url() const;  // "http(s)://127.0.0.1:<port>"
  // A kubeconfig (YAML) whose current context reaches this server with its token (and, with
  // tls, trusts its CA), for a child process given --kubeconfig.
  std::string Kubeconfig() const;
  const TestPki& pki() const;  // the CA and server certificate (tls)

  void AddRoute(std::string method, std::string pattern, RouteHandler handler);
  void SetToken(std::string token);  // a rotated token: the old one is refused from now on
  void PutObject(std::string path, std::string json);

  void SetEvictionAnswer(const std::string& pod_namespace, const std::string& name,
                         EvictionAnswer answer);
  void SetDefaultEvictionAnswer(EvictionAnswer answer);  // kEvict unless set
  // Called with every eviction answered 201 (not a dry run), after the answer is decided, on
  // the server's thread: a test deletes the pod from its collection there, as the API server
  // deletes an evicted pod.
  void OnEvicted(std::function<void(const RecordedEviction&)> hook);
  std::vector<RecordedEviction> evictions() const;
  int requests() const;      // every request received, authenticated or not
  int unauthorized() const;  // those answered 401

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace qrm::testing
