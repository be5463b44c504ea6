#include "cluster/kube/http_client.h"

#include <exception>
#include <optional>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "cluster/kube/http_exchange.h"
#include "common/quote.h"

namespace qrm::kube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

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

using internal::Exchange;

// Writes the request and reads the whole answer (bounded by kMaxResponseBytes).
template <typename Stream>
StatusOr<HttpResponse> Send(Exchange& exchange, Stream& stream,
                            http::request<http::string_body>& req) {
  const auto close = [&] { beast::get_lowest_layer(stream).close(); };
  beast::error_code ec =
      exchange.Wait([&](auto handler) { http::async_write(stream, req, handler); }, close);
  if (ec) return exchange.Error("sending the request", ec);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxResponseBytes);
  ec = exchange.Wait([&](auto handler) { http::async_read(stream, buffer, parser, handler); },
                     close);
  if (ec) return exchange.Error("reading the answer", ec);
  http::response<http::string_body> res = parser.release();
  HttpResponse out;
  out.status = static_cast<int>(res.result_int());
  out.content_type = std::string(res[http::field::content_type]);
  out.body = std::move(res.body());
  close();
  return out;
}

// Writes the request, reads the answer's header, then hands a 2xx body to `sink` piece by
// piece (each read bounded by the idle timeout); any other body is read whole.
template <typename Stream>
StatusOr<HttpResponse> SendStreamed(Exchange& exchange, Stream& stream,
                                    http::request<http::string_body>& req, StreamTimeouts timeouts,
                                    const BodySink& sink) {
  const auto close = [&] { beast::get_lowest_layer(stream).close(); };
  beast::error_code ec =
      exchange.Wait([&](auto handler) { http::async_write(stream, req, handler); }, close);
  if (ec) return exchange.Error("sending the request", ec);
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);  // a watch has no end; the sink bounds what it keeps
  ec = exchange.Wait(
      [&](auto handler) { http::async_read_header(stream, buffer, parser, handler); }, close);
  if (ec) return exchange.Error("reading the answer's header", ec);
  HttpResponse out;
  out.status = static_cast<int>(parser.get().result_int());
  out.content_type = std::string(parser.get()[http::field::content_type]);
  const bool streamed = out.status >= 200 && out.status < 300;
  char piece[16384];
  while (!parser.is_done()) {
    parser.get().body().data = piece;
    parser.get().body().size = sizeof(piece);
    exchange.set_deadline(Exchange::Clock::now() + timeouts.idle);
    // read_some: a watch event must come out as soon as its bytes are in, not once a whole
    // piece is full.
    ec = exchange.Wait(
        [&](auto handler) { http::async_read_some(stream, buffer, parser, handler); }, close);
    if (ec == http::error::need_buffer) ec = {};  // the piece is full
    if (ec) return exchange.Error("reading the answer", ec);
    const std::string_view got(piece, sizeof(piece) - parser.get().body().size);
    if (streamed && !got.empty() && !sink(got)) break;
    if (!streamed) out.body.append(got);
    if (out.body.size() > kMaxResponseBytes) {
      return exchange.Error("reading the answer", http::error::body_limit);
    }
  }
  close();
  return out;
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
    Exchange exchange(url, request, Exchange::Clock::now() + timeout);
    StatusOr<http::request<http::string_body>> req = exchange.BuildRequest();
    if (!req.ok()) return req.status();
    return exchange.Open(tls, [&](auto& stream) { return Send(exchange, stream, *req); });
  } catch (const std::exception& e) {  // Asio and Beast throw only on exhaustion
    return InternalError(
        fmt::format("{} {}{}: {}", request.method, url.ToString(), request.target, e.what()));
  }
}

}  // namespace qrm::kube

namespace qrm::kube {

StatusOr<HttpResponse> HttpStream(const Url& url, const TlsConfig& tls, const HttpRequest& request,
                                  StreamTimeouts timeouts, const BodySink& sink,
                                  std::stop_token stop) {
  try {
    Exchange exchange(url, request, Exchange::Clock::now() + timeouts.connect, std::move(stop));
    StatusOr<http::request<http::string_body>> req = exchange.BuildRequest();
    if (!req.ok()) return req.status();
    return exchange.Open(
        tls, [&](auto& stream) { return SendStreamed(exchange, stream, *req, timeouts, sink); });
  } catch (const std::exception& e) {  // Asio and Beast throw only on exhaustion
    return InternalError(
        fmt::format("{} {}{}: {}", request.method, url.ToString(), request.target, e.what()));
  }
}

}  // namespace qrm::kube
