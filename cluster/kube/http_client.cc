#include "cluster/kube/http_client.h"

#include <exception>
#include <optional>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "common/quote.h"

namespace qrm::kube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

bool IsIpAddress(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

bool IsHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

// The port after "host:", or nullopt when it is not 1..65535.
std::optional<uint16_t> ParsePort(std::string_view text) {
  if (text.empty() || text.size() > 5) return std::nullopt;
  uint32_t port = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port == 0 || port > 65535) return std::nullopt;
  return static_cast<uint16_t>(port);
}

Status ParseAuthority(std::string_view authority, std::string_view url, Url& out) {
  const auto bad = [&](std::string_view why) {
    return InvalidArgumentError(fmt::format("server URL {}: {}", Quote(url), why));
  };
  std::string_view port_text;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 address without its ']'");
    out.host = std::string(authority.substr(1, close - 1));
    boost::system::error_code ec;
    asio::ip::make_address_v6(out.host, ec);
    if (ec) return bad("not an IPv6 address between '[' and ']'");
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return bad("text after ']' that is not a port");
    if (!rest.empty()) port_text = rest.substr(1);
    if (rest == ":") return bad("an empty port");
  } else {
    const size_t colon = authority.find(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    if (colon != std::string_view::npos && port_text.empty()) return bad("an empty port");
    if (out.host.empty()) return bad("no host");
    for (const char c : out.host) {
      if (!IsHostChar(c)) return bad("a host name with characters other than [A-Za-z0-9._-]");
    }
  }
  out.port = out.tls ? 443 : 80;
  if (!port_text.empty()) {
    const std::optional<uint16_t> port = ParsePort(port_text);
    if (!port) return bad(fmt::format("port {} is not 1..65535", Quote(port_text)));
    out.port = *port;
  }
  return Status::Ok();
}

// Runs the steps of one exchange on a private io_context, each bounded by the exchange's
// deadline: an operation still pending then is cancelled by closing the socket.
class Exchange {
 public:
  Exchange(const Url& url, const HttpRequest& request, std::chrono::milliseconds timeout)
      : url_(url), request_(request), deadline_(Clock::now() + timeout) {}

  StatusOr<HttpResponse> Run(const TlsConfig& tls);

 private:
  template <typename Start, typename Cancel>
  beast::error_code Wait(Start&& start, Cancel&& cancel);

  Status Error(std::string_view step, const beast::error_code& ec) const;
  Status Connect(beast::tcp_stream& stream);
  StatusOr<ssl::context> MakeTlsContext(const TlsConfig& tls) const;
  Status Handshake(beast::ssl_stream<beast::tcp_stream>& stream, const TlsConfig& tls);
  StatusOr<http::request<http::string_body>> BuildRequest() const;
  template <typename Stream>
  StatusOr<HttpResponse> Send(Stream& stream, http::request<http::string_body>& req);

  const Url& url_;
  const HttpRequest& request_;
  const Clock::time_point deadline_;
  asio::io_context ioc_;
};

template <typename Start, typename Cancel>
beast::error_code Exchange::Wait(Start&& start, Cancel&& cancel) {
  beast::error_code result;
  bool done = false;
  start([&](beast::error_code ec, auto&&...) {
    result = ec;
    done = true;
  });
  ioc_.restart();
  ioc_.run_until(deadline_);
  if (done) return result;
  cancel();
  ioc_.restart();
  ioc_.run();  // the cancelled operation's handler
  return asio::error::timed_out;
}

Status Exchange::Error(std::string_view step, const beast::error_code& ec) const {
  const std::string message = fmt::format("{} {}{}: {}: {}", request_.method, url_.ToString(),
                                          request_.target, step, ec.message());
  if (ec == asio::error::timed_out) return DeadlineExceededError(message + " (timed out)");
  if (ec == http::error::body_limit) return ResourceExhaustedError(message);
  return UnavailableError(message);
}

Status Exchange::Connect(beast::tcp_stream& stream) {
  tcp::resolver resolver(ioc_);
  tcp::resolver::results_type endpoints;
  beast::error_code ec = Wait(
      [&](auto handler) {
        resolver.async_resolve(url_.host, std::to_string(url_.port),
                               [&, handler](beast::error_code e, tcp::resolver::results_type r) {
                                 endpoints = std::move(r);
                                 handler(e);
                               });
      },
      [&] { resolver.cancel(); });
  if (ec) return Error("resolve", ec);
  ec = Wait([&](auto handler) { stream.async_connect(endpoints, handler); },
            [&] { stream.close(); });
  if (ec) return Error("connect", ec);
  return Status::Ok();
}

StatusOr<ssl::context> Exchange::MakeTlsContext(const TlsConfig& tls) const {
  ssl::context ctx(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  beast::error_code ec;
  if (tls.insecure_skip_verify) {
    ctx.set_verify_mode(ssl::verify_none, ec);
  } else {
    ctx.set_verify_mode(ssl::verify_peer, ec);
    if (!ec && tls.ca_pem.empty()) ctx.set_default_verify_paths(ec);
    if (!ec && !tls.ca_pem.empty()) ctx.add_certificate_authority(asio::buffer(tls.ca_pem), ec);
    if (ec) return Error("loading the CA certificates", ec);
  }
  if (!tls.client_cert_pem.empty() || !tls.client_key_pem.empty()) {
    ctx.use_certificate_chain(asio::buffer(tls.client_cert_pem), ec);
    if (ec) return Error("loading the client certificate", ec);
    ctx.use_private_key(asio::buffer(tls.client_key_pem), ssl::context::pem, ec);
    if (ec) return Error("loading the client key", ec);
  }
  return ctx;
}

// SNI, then the name (or address) the certificate must be for, checked by OpenSSL during
// the chain verification itself.
Status Exchange::Handshake(beast::ssl_stream<beast::tcp_stream>& stream, const TlsConfig& tls) {
  const std::string& name = tls.server_name.empty() ? url_.host : tls.server_name;
  SSL* ssl_handle = stream.native_handle();
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  const bool ip = IsIpAddress(name);
  if (!ip) SSL_set_tlsext_host_name(ssl_handle, name.c_str());
  const int set = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                     : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
  if (set != 1) {
    return InvalidArgumentError(fmt::format("{} {}: TLS server name {} is not usable",
                                            request_.method, url_.ToString(), Quote(name)));
  }
  const beast::error_code ec =
      Wait([&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); },
           [&] { beast::get_lowest_layer(stream).close(); });
  if (!ec) return Status::Ok();
  const long verify = SSL_get_verify_result(ssl_handle);
  if (verify != X509_V_OK && !tls.insecure_skip_verify) {
    return UnavailableError(fmt::format("{} {}{}: TLS handshake: certificate verify failed: {}",
                                        request_.method, url_.ToString(), request_.target,
                                        X509_verify_cert_error_string(verify)));
  }
  return Error("TLS handshake", ec);
}

StatusOr<http::request<http::string_body>> Exchange::BuildRequest() const {
  const http::verb verb = http::string_to_verb(request_.method);
  if (verb == http::verb::unknown) {
    return InvalidArgumentError(fmt::format("HTTP method {}: unknown", Quote(request_.method)));
  }
  http::request<http::string_body> req(verb, url_.base_path + request_.target, 11);
  const bool default_port = url_.port == (url_.tls ? 443 : 80);
  req.set(http::field::host,
          default_port
              ? (url_.host.find(':') == std::string::npos ? url_.host : "[" + url_.host + "]")
              : url_.HostPort());
  req.set(http::field::user_agent, "qrm/0.1");
  req.set(http::field::connection, "close");
  for (const auto& [name, value] : request_.headers) req.set(name, value);
  req.body() = request_.body;
  req.prepare_payload();
  return req;
}

template <typename Stream>
StatusOr<HttpResponse> Exchange::Send(Stream& stream, http::request<http::string_body>& req) {
  const auto close = [&] { beast::get_lowest_layer(stream).close(); };
  beast::error_code ec =
      Wait([&](auto handler) { http::async_write(stream, req, handler); }, close);
  if (ec) return Error("sending the request", ec);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxResponseBytes);
  ec = Wait([&](auto handler) { http::async_read(stream, buffer, parser, handler); }, close);
  if (ec) return Error("reading the answer", ec);
  http::response<http::string_body> res = parser.release();
  HttpResponse out;
  out.status = static_cast<int>(res.result_int());
  out.content_type = std::string(res[http::field::content_type]);
  out.body = std::move(res.body());
  close();
  return out;
}

StatusOr<HttpResponse> Exchange::Run(const TlsConfig& tls) {
  QRM_ASSIGN_OR_RETURN(http::request<http::string_body> req, BuildRequest());
  if (!url_.tls) {
    beast::tcp_stream stream(ioc_);
    QRM_RETURN_IF_ERROR(Connect(stream));
    return Send(stream, req);
  }
  QRM_ASSIGN_OR_RETURN(ssl::context ctx, MakeTlsContext(tls));
  beast::ssl_stream<beast::tcp_stream> stream(ioc_, ctx);
  QRM_RETURN_IF_ERROR(Connect(beast::get_lowest_layer(stream)));
  QRM_RETURN_IF_ERROR(Handshake(stream, tls));
  return Send(stream, req);
}

}  // namespace

std::string Url::HostPort() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

std::string Url::ToString() const {
  return fmt::format("{}://{}{}", tls ? "https" : "http", HostPort(), base_path);
}

StatusOr<Url> ParseUrl(std::string_view url) {
  Url out;
  std::string_view rest;
  if (url.substr(0, 8) == "https://") {
    out.tls = true;
    rest = url.substr(8);
  } else if (url.substr(0, 7) == "http://") {
    rest = url.substr(7);
  } else {
    return InvalidArgumentError(fmt::format("server URL {}: not http:// or https://", Quote(url)));
  }
  for (const char c : rest) {
    if (c == '@' || c == '?' || c == '#' || static_cast<unsigned char>(c) <= ' ' ||
        static_cast<unsigned char>(c) >= 0x7f) {
      return InvalidArgumentError(fmt::format(
          "server URL {}: user info, a query, a fragment or a blank: not supported", Quote(url)));
    }
  }
  const size_t slash = rest.find('/');
  QRM_RETURN_IF_ERROR(ParseAuthority(rest.substr(0, slash), url, out));
  if (slash != std::string_view::npos) out.base_path = std::string(rest.substr(slash));
  while (!out.base_path.empty() && out.base_path.back() == '/') out.base_path.pop_back();
  return out;
}

StatusOr<HttpResponse> HttpCall(const Url& url, const TlsConfig& tls, const HttpRequest& request,
                                std::chrono::milliseconds timeout) {
  try {
    Exchange exchange(url, request, timeout);
    return exchange.Run(tls);
  } catch (const std::exception& e) {  // Asio and Beast throw only on exhaustion
    return InternalError(
        fmt::format("{} {}{}: {}", request.method, url.ToString(), request.target, e.what()));
  }
}

}  // namespace qrm::kube
