#include "cluster/kube/kube_client.h"

#include <chrono>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "cluster/kube/http_client.h"
#include "testing/kube/test_api_server.h"
#include "testing/temp_dir.h"

namespace qrm::kube {
namespace {

using Catch::Matchers::Contains;
using qrm::testing::ApiRequest;
using qrm::testing::ApiResponse;
using qrm::testing::TempDir;
using qrm::testing::TestApiServer;
using qrm::testing::TestApiServerOptions;
using qrm::testing::WriteFile;

KubeClient MustClient(ClusterConfig config) {
  StatusOr<KubeClient> client = KubeClient::Create(std::move(config));
  REQUIRE(client.ok());
  return std::move(client).value();
}

ClusterConfig ConfigFor(const TestApiServer& server) {
  ClusterConfig config;
  config.server = server.url();
  config.ca_data = server.pki().ca.cert_pem;
  config.token = "test-token";
  config.timeout = std::chrono::seconds(5);
  return config;
}

TEST_CASE("server URLs parse with IPv6 hosts ports and path prefixes") {
  StatusOr<Url> url = ParseUrl("https://[fd00::1]:8443/k8s/clusters/c1/");
  REQUIRE(url.ok());
  CHECK(url->tls);
  CHECK(url->host == "fd00::1");
  CHECK(url->port == 8443);
  CHECK(url->base_path == "/k8s/clusters/c1");
  CHECK(url->ToString() == "https://[fd00::1]:8443/k8s/clusters/c1");
  StatusOr<Url> plain = ParseUrl("http://api.example");
  REQUIRE(plain.ok());
  CHECK(plain->port == 80);
  CHECK(plain->HostPort() == "api.example:80");
  for (const char* bad : {"ftp://h", "https://", "https://h:0", "https://h:x", "https://u@h",
                          "https://h?q=1", "https://[::1", "https://[zz]:1", "https://h h"}) {
    StatusOr<Url> u = ParseUrl(bad);
    INFO(bad);
    CHECK(u.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(u.status().message(), Contains(std::string("\"") + bad + "\""));
  }
}

TEST_CASE("a GET of a stored object over HTTP returns it") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  server.PutObject("/api/v1/nodes/n1", R"({"kind":"Node","metadata":{"name":"n1"}})");
  const KubeClient client = MustClient(ConfigFor(server));
  StatusOr<KubeResponse> got = client.Request("GET", "/api/v1/nodes/n1");
  REQUIRE(got.ok());
  CHECK(got->code == 200);
  CHECK(got->body == R"({"kind":"Node","metadata":{"name":"n1"}})");
  CHECK(got->content_type == "application/json");
  StatusOr<KubeResponse> missing = client.Request("GET", "/api/v1/nodes/n2");
  REQUIRE(missing.ok());
  CHECK(missing->code == 404);
  const Status error = ApiError("GET", client.UrlOf("/api/v1/nodes/n2"), *missing);
  CHECK(error.code() == StatusCode::kNotFound);
  CHECK_THAT(error.message(), Contains(server.url() + "/api/v1/nodes/n2") &&
                                  Contains("404 NotFound: the server could not find"));
}

TEST_CASE("routes added by a test answer with their path segments") {
  TestApiServer server;
  server.AddRoute(
      "GET", "/apis/topology.node.k8s.io/v1alpha1/noderesourcetopologies/{}",
      [](const ApiRequest& r) {
        return ApiResponse{200, R"({"name":")" + r.params.at(0) + R"(","q":")" + r.query + "\"}"};
      });
  REQUIRE(server.Start().ok());
  const KubeClient client = MustClient(ConfigFor(server));
  StatusOr<KubeResponse> got =
      client.Request("GET", "/apis/topology.node.k8s.io/v1alpha1/noderesourcetopologies/n1?x=1");
  REQUIRE(got.ok());
  CHECK(got->body == R"({"name":"n1","q":"x=1"})");
  StatusOr<KubeResponse> wrong_method =
      client.Request("DELETE", "/apis/topology.node.k8s.io/v1alpha1/noderesourcetopologies/n1");
  REQUIRE(wrong_method.ok());
  CHECK(wrong_method->code == 405);
}

TEST_CASE("a missing or wrong token gets 401 and an error") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  ClusterConfig config = ConfigFor(server);
  config.token = "";
  StatusOr<KubeResponse> none = MustClient(config).Request("GET", "/api/v1/nodes");
  REQUIRE(none.ok());
  CHECK(none->code == 401);
  config.token = "wrong";
  StatusOr<KubeResponse> wrong = MustClient(config).Request("GET", "/api/v1/nodes");
  REQUIRE(wrong.ok());
  CHECK(wrong->code == 401);
  const Status error = ApiError("GET", "u", *wrong);
  CHECK(error.code() == StatusCode::kPermissionDenied);
  CHECK_THAT(error.message(), Contains("401 Unauthorized: Unauthorized"));
  CHECK(server.unauthorized() == 2);
}

TEST_CASE("the token file is read again at every request") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  TempDir dir;
  WriteFile(dir.File("token"), "test-token\n");
  ClusterConfig config = ConfigFor(server);
  config.token = "";
  config.token_file = dir.File("token");
  const KubeClient client = MustClient(config);
  CHECK(client.Request("GET", "/api/v1/nodes")->code == 404);  // authenticated: no such object
  server.SetToken("rotated-token");
  WriteFile(dir.File("token"), "rotated-token");
  CHECK(client.Request("GET", "/api/v1/nodes")->code == 404);
  CHECK(server.unauthorized() == 0);
  WriteFile(dir.File("token"), "");
  StatusOr<KubeResponse> empty = client.Request("GET", "/api/v1/nodes");
  CHECK_THAT(empty.status().message(), Contains("token file") && Contains("empty"));
}

TEST_CASE("HTTPS verifies the server against the CA and the IP address") {
  TestApiServer server({.tls = true});
  REQUIRE(server.Start().ok());
  REQUIRE_THAT(server.url(), Contains("https://127.0.0.1:"));
  ClusterConfig config = ConfigFor(server);
  CHECK(MustClient(config).Request("GET", "/api")->code == 404);

  StatusOr<qrm::testing::TestPki> other = qrm::testing::MakeTestPki("another CA");
  REQUIRE(other.ok());
  config.ca_data = other->ca.cert_pem;
  StatusOr<KubeResponse> untrusted = MustClient(config).Request("GET", "/api");
  CHECK(untrusted.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(untrusted.status().message(),
             Contains("GET " + server.url() + "/api") && Contains("certificate verify failed"));

  config.ca_data = server.pki().ca.cert_pem;
  config.tls_server_name = "localhost";  // a DNS SAN of the certificate
  CHECK(MustClient(config).Request("GET", "/api")->code == 404);
  config.tls_server_name = "api.example";
  StatusOr<KubeResponse> wrong_name = MustClient(config).Request("GET", "/api");
  CHECK_THAT(wrong_name.status().message(),
             Contains("certificate verify failed") && Contains("mismatch"));

  config.tls_server_name = "";
  config.ca_data = "";
  config.insecure_skip_tls_verify = true;
  CHECK(MustClient(config).Request("GET", "/api")->code == 404);
}

TEST_CASE("the CA file is read at each connection") {
  TestApiServer server({.tls = true});
  REQUIRE(server.Start().ok());
  TempDir dir;
  WriteFile(dir.File("ca.crt"), server.pki().ca.cert_pem);
  ClusterConfig config = ConfigFor(server);
  config.ca_data = "";
  config.ca_file = dir.File("ca.crt");
  const KubeClient client = MustClient(config);
  CHECK(client.Request("GET", "/api")->code == 404);
  ::unlink(dir.File("ca.crt").c_str());
  StatusOr<KubeResponse> gone = client.Request("GET", "/api");
  CHECK(gone.status().code() == StatusCode::kNotFound);
  CHECK_THAT(gone.status().message(), Contains(dir.File("ca.crt")) && Contains(server.url()));
}

TEST_CASE("a client certificate signed by the server's CA authenticates") {
  TestApiServer server({.tls = true, .accept_client_certificates = true});
  REQUIRE(server.Start().ok());
  StatusOr<qrm::testing::TestCertificate> cert =
      qrm::testing::MakeClientCertificate(server.pki().ca, "system:node:n1");
  REQUIRE(cert.ok());
  ClusterConfig config = ConfigFor(server);
  config.token = "";
  CHECK(MustClient(config).Request("GET", "/api")->code == 401);
  config.client_cert_data = cert->cert_pem;
  config.client_key_data = cert->key_pem;
  CHECK(MustClient(config).Request("GET", "/api")->code == 404);
}

TEST_CASE("transport errors name the method and the URL") {
  TestApiServer server;
  server.AddRoute("GET", "/slow", [](const ApiRequest&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    return ApiResponse{200, "{}"};
  });
  REQUIRE(server.Start().ok());
  ClusterConfig config = ConfigFor(server);
  config.timeout = std::chrono::milliseconds(150);
  StatusOr<KubeResponse> slow = MustClient(config).Request("GET", "/slow");
  CHECK(slow.status().code() == StatusCode::kDeadlineExceeded);
  CHECK_THAT(slow.status().message(), Contains("GET " + server.url() + "/slow"));
  const std::string url = server.url();
  server.Stop();
  config.server = url;
  StatusOr<KubeResponse> refused = MustClient(config).Request("POST", "/x", "{}");
  CHECK(refused.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(refused.status().message(), Contains("POST " + url + "/x: connect"));
}

TEST_CASE("bad requests are refused before anything is sent") {
  ClusterConfig config;
  config.server = "http://127.0.0.1:1";
  CHECK(KubeClient::Create(config).ok());
  const KubeClient client = MustClient(config);
  CHECK(client.Request("GET", "api/v1").status().code() == StatusCode::kInvalidArgument);
  CHECK(client.Request("GET", "/api v1").status().code() == StatusCode::kInvalidArgument);
  CHECK(client.Request("GET", "/api\r\nX: y").status().code() == StatusCode::kInvalidArgument);
  CHECK(client.Request("BREW", "/api").status().code() == StatusCode::kInvalidArgument);
  config.server = "127.0.0.1:6443";
  CHECK(KubeClient::Create(config).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("answers that are not Status objects are described by their code and body") {
  const KubeResponse html{502, "<html>bad gateway</html>", "text/html"};
  CHECK(DescribeAnswer(html) == "502: \"<html>bad gateway</html>\"");
  CHECK(ApiError("GET", "http://h/x", html).code() == StatusCode::kInternal);
  CHECK(ApiError("GET", "http://h/x", KubeResponse{200, "{}", ""}).ok());
  const std::optional<ApiStatus> status = ParseApiStatus(
      R"({"kind":"Status","status":"Failure","reason":"Conflict","message":"m","code":409,)"
      R"("details":{"causes":[{"message":"c1"},{"reason":"x"}]}})");
  REQUIRE(status);
  CHECK(status->reason == "Conflict");
  CHECK(status->code == 409);
  CHECK(status->causes == std::vector<std::string>{"c1"});
  CHECK_FALSE(ParseApiStatus(R"({"kind":"Pod"})"));
}

}  // namespace
}  // namespace qrm::kube
