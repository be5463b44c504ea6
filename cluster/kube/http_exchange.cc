#include "cluster/kube/http_exchange.h"

#include <algorithm>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "common/quote.h"

namespace qrm::kube::internal {

namespace beast = boost::beast;
namespace {

namespace asio = boost::asio;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

bool IsIpAddress(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

bool Exchange::RunOnce() {
  const Clock::time_point now = Clock::now();
  if (now >= deadline_ || stopped()) return false;
  // Slices of 100 ms, so a stop from another thread is seen that soon.
  ioc_.run_one_until(std::min(deadline_, now + std::chrono::milliseconds(100)));
  return true;
}

Status Exchange::Error(std::string_view step, const beast::error_code& ec) const {
  const std::string message = fmt::format("{} {}{}: {}: {}", request_.method, url_.ToString(),
                                          request_.target, step, ec.message());
  if (ec == asio::error::timed_out) return DeadlineExceededError(message + " (timed out)");
  if (ec == asio::error::operation_aborted && stopped())
    return Status(StatusCode::kCancelled, message);
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

}  // namespace qrm::kube::internal
