// The HTTP server's request routes (methods, bodies and their bound, the read deadline) and
// its TLS listener (certificates made in process, rotation on disk, bad files at Start).
#include "common/http/http_server.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <catch2/catch.hpp>

#include "testing/kube/test_certificates.h"
#include "testing/temp_dir.h"

namespace qrm {
namespace {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

struct Answer {
  int status = 0;  // 0: no answer (error says why)
  std::string body;
  std::string allow;
  std::string error;
};

beast::http::request<beast::http::string_body> MakeRequest(beast::http::verb verb,
                                                           const std::string& target,
                                                           std::string body = "") {
  beast::http::request<beast::http::string_body> req(verb, target, 11);
  req.set(beast::http::field::host, "localhost");
  if (!body.empty()) req.set(beast::http::field::content_type, "application/json");
  req.body() = std::move(body);
  req.prepare_payload();
  return req;
}

template <typename Stream>
Answer Exchange(Stream& stream, const beast::http::request<beast::http::string_body>& req) {
  Answer answer;
  beast::error_code ec;
  beast::http::write(stream, req, ec);
  beast::flat_buffer buffer;
  beast::http::response<beast::http::string_body> res;
  if (!ec) beast::http::read(stream, buffer, res, ec);
  if (ec) {
    answer.error = ec.message();
    return answer;
  }
  answer.status = static_cast<int>(res.result_int());
  answer.body = res.body();
  answer.allow = std::string(res[beast::http::field::allow]);
  return answer;
}

tcp::endpoint Local(int port) {
  return {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)};
}

Answer Send(int port, const beast::http::request<beast::http::string_body>& req) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  stream.connect(Local(port));
  return Exchange(stream, req);
}

// Over TLS, trusting only `ca_pem` and checking the name "localhost".
Answer SendTls(int port, const std::string& ca_pem,
               const beast::http::request<beast::http::string_body>& req) {
  asio::io_context io;
  ssl::context context(ssl::context::tls_client);
  context.add_certificate_authority(asio::buffer(ca_pem));
  context.set_verify_mode(ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(io, context);
  stream.set_verify_callback(ssl::host_name_verification("localhost"));
  beast::get_lowest_layer(stream).connect(Local(port));
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
  beast::error_code ec;
  stream.handshake(ssl::stream_base::client, ec);
  if (ec) return Answer{0, "", "", "handshake: " + ec.message()};
  return Exchange(stream, req);
}

http::Route Echo() {
  return {{"POST", "PUT"}, [](const http::Request& r) {
            return http::Response{200, "text/plain",
                                  r.method + " " + r.target + " " + r.content_type + " " + r.body};
          }};
}

TEST_CASE("HTTP server: a POST route receives the method and target and content type and body") {
  http::HttpServer server("127.0.0.1:0", {{"/echo", Echo()}}, http::ServerOptions{});
  REQUIRE(server.Start().ok());
  Answer a = Send(server.port(), MakeRequest(beast::http::verb::post, "/echo?x=1", "{\"a\":1}"));
  CHECK(a.status == 200);
  CHECK(a.body == "POST /echo?x=1 application/json {\"a\":1}");
  CHECK(Send(server.port(), MakeRequest(beast::http::verb::put, "/echo", "b")).body ==
        "PUT /echo application/json b");
  CHECK(Send(server.port(), MakeRequest(beast::http::verb::post, "/other", "b")).status == 404);
}

TEST_CASE("HTTP server: a method the route does not take is 405 with an Allow header") {
  std::map<std::string, http::Route> routes{
      {"/echo", Echo()}, {"/get", {{"GET"}, [](const http::Request&) {
                                     return http::Response{200, "text/plain", "g"};
                                   }}}};
  http::HttpServer server("127.0.0.1:0", std::move(routes), http::ServerOptions{});
  REQUIRE(server.Start().ok());
  Answer a = Send(server.port(), MakeRequest(beast::http::verb::get, "/echo"));
  CHECK(a.status == 405);
  CHECK(a.allow == "POST, PUT");
  Answer b = Send(server.port(), MakeRequest(beast::http::verb::delete_, "/get"));
  CHECK(b.status == 405);
  CHECK(b.allow == "GET, HEAD");
  CHECK(Send(server.port(), MakeRequest(beast::http::verb::head, "/get")).status == 200);
}

TEST_CASE("HTTP server: GET-only routes of the old constructor refuse POST with 405") {
  http::HttpServer server("127.0.0.1:0", http::StandardRoutes([] { return true; }));
  REQUIRE(server.Start().ok());
  Answer a = Send(server.port(), MakeRequest(beast::http::verb::post, "/healthz", "x"));
  CHECK(a.status == 405);
  CHECK(a.allow == "GET, HEAD");
  CHECK(Send(server.port(), MakeRequest(beast::http::verb::get, "/healthz")).body == "ok\n");
}

TEST_CASE("HTTP server: a body over the bound is answered 413") {
  http::ServerOptions options;
  options.max_body_bytes = 1024;
  http::HttpServer server("127.0.0.1:0", {{"/echo", Echo()}}, options);
  REQUIRE(server.Start().ok());
  CHECK(Send(server.port(), MakeRequest(beast::http::verb::post, "/echo", std::string(1024, 'a')))
            .status == 200);
  Answer a =
      Send(server.port(), MakeRequest(beast::http::verb::post, "/echo", std::string(1025, 'a')));
  CHECK(a.status == 413);
  CHECK_THAT(a.body, Catch::Contains("1024"));
}

TEST_CASE("HTTP server: a client that stops sending its body is closed at the read deadline") {
  http::ServerOptions options;
  options.read_timeout = std::chrono::milliseconds(300);
  http::HttpServer server("127.0.0.1:0", {{"/echo", Echo()}}, options);
  REQUIRE(server.Start().ok());
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(Local(server.port()));
  const std::string partial =
      "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n0123456789";
  asio::write(socket, asio::buffer(partial));
  const auto start = std::chrono::steady_clock::now();
  char byte;
  beast::error_code ec;
  socket.read_some(asio::buffer(&byte, 1), ec);  // blocks until the server closes
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(ec == asio::error::eof);
  CHECK(waited >= std::chrono::milliseconds(200));
  CHECK(waited < std::chrono::seconds(5));
}

// A PKI's server certificate and key in files, as a Secret volume holds them.
struct CertFiles {
  testing::TempDir dir;
  http::TlsFiles files{dir.File("tls.crt"), dir.File("tls.key")};

  void Write(const testing::TestCertificate& cert, const std::string& key_pem) {
    testing::WriteFile(files.cert_file, cert.cert_pem);
    testing::WriteFile(files.key_file, key_pem);
    // Rotations within one clock tick still look new to the server.
    static int bump = 0;
    const auto when = std::filesystem::file_time_type::clock::now() + std::chrono::seconds(++bump);
    std::filesystem::last_write_time(files.cert_file, when);
    std::filesystem::last_write_time(files.key_file, when);
  }
};

http::ServerOptions TlsOptions(const http::TlsFiles& files) {
  http::ServerOptions options;
  options.tls = files;
  options.tls_reload_interval = std::chrono::milliseconds(0);
  return options;
}

TEST_CASE("HTTP server: serves TLS with the certificate of its files") {
  auto pki = testing::MakeTestPki();
  REQUIRE(pki.ok());
  CertFiles certs;
  certs.Write(pki->server, pki->server.key_pem);
  http::HttpServer server("127.0.0.1:0", {{"/echo", Echo()}}, TlsOptions(certs.files));
  REQUIRE(server.Start().ok());
  Answer a = SendTls(server.port(), pki->ca.cert_pem,
                     MakeRequest(beast::http::verb::post, "/echo", "over tls"));
  CHECK(a.error == "");
  CHECK(a.status == 200);
  CHECK_THAT(a.body, Catch::EndsWith("over tls"));
  auto other = testing::MakeTestPki("another CA");
  REQUIRE(other.ok());
  CHECK_THAT(
      SendTls(server.port(), other->ca.cert_pem, MakeRequest(beast::http::verb::post, "/echo", "x"))
          .error,
      Catch::StartsWith("handshake"));
}

TEST_CASE("HTTP server: a rotated certificate is served without a restart") {
  auto first = testing::MakeTestPki("first CA");
  auto second = testing::MakeTestPki("second CA");
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CertFiles certs;
  certs.Write(first->server, first->server.key_pem);
  http::HttpServer server("127.0.0.1:0", {{"/echo", Echo()}}, TlsOptions(certs.files));
  REQUIRE(server.Start().ok());
  const auto req = MakeRequest(beast::http::verb::post, "/echo", "x");
  CHECK(SendTls(server.port(), first->ca.cert_pem, req).status == 200);

  certs.Write(second->server, second->server.key_pem);
  CHECK(SendTls(server.port(), second->ca.cert_pem, req).status == 200);
  CHECK(SendTls(server.port(), first->ca.cert_pem, req).status == 0);
}

TEST_CASE("HTTP server: a rotated pair that does not load keeps the old certificate") {
  auto first = testing::MakeTestPki("first CA");
  auto second = testing::MakeTestPki("second CA");
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CertFiles certs;
  certs.Write(first->server, first->server.key_pem);
  http::HttpServer server("127.0.0.1:0", {{"/echo", Echo()}}, TlsOptions(certs.files));
  REQUIRE(server.Start().ok());
  const auto req = MakeRequest(beast::http::verb::post, "/echo", "x");

  certs.Write(second->server, first->server.key_pem);  // the key of the other certificate
  CHECK(SendTls(server.port(), first->ca.cert_pem, req).status == 200);
  CHECK(SendTls(server.port(), first->ca.cert_pem, req).status == 200);
  certs.Write(second->server, "garbage");
  CHECK(SendTls(server.port(), first->ca.cert_pem, req).status == 200);
  // The rotation completing is taken up.
  certs.Write(second->server, second->server.key_pem);
  CHECK(SendTls(server.port(), second->ca.cert_pem, req).status == 200);
}

Status StartWith(const http::TlsFiles& files) {
  http::HttpServer server("127.0.0.1:0", {{"/echo", Echo()}}, TlsOptions(files));
  return server.Start();
}

TEST_CASE("HTTP server: TLS files that do not load fail Start naming the file") {
  auto pki = testing::MakeTestPki();
  auto other = testing::MakeTestPki("another CA");
  REQUIRE(pki.ok());
  REQUIRE(other.ok());
  CertFiles certs;

  certs.Write(pki->server, "not a key");
  Status bad_key = StartWith(certs.files);
  CHECK(bad_key.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(bad_key.message(),
             Catch::Contains("key_file") && Catch::Contains(certs.files.key_file));

  certs.Write(pki->server, other->server.key_pem);
  Status mismatch = StartWith(certs.files);
  CHECK(mismatch.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(mismatch.message(), Catch::Contains(certs.files.key_file) &&
                                     Catch::Contains(certs.files.cert_file) &&
                                     Catch::Contains("not the key"));

  certs.Write(testing::TestCertificate{"no certificate", ""}, pki->server.key_pem);
  Status bad_cert = StartWith(certs.files);
  CHECK_THAT(bad_cert.message(),
             Catch::Contains("cert_file") && Catch::Contains(certs.files.cert_file));

  Status missing = StartWith({certs.dir.File("absent.crt"), certs.files.key_file});
  CHECK_THAT(missing.message(), Catch::Contains("absent.crt") && Catch::Contains("No such file"));
}

TEST_CASE("HTTP server: a bad address names the key of the options") {
  http::ServerOptions options;
  options.address_key = "webhook_address";
  http::HttpServer server("nowhere", {{"/echo", Echo()}}, options);
  CHECK_THAT(server.Start().message(), Catch::Contains("webhook_address"));
}

}  // namespace
}  // namespace qrm
