#include "common/http/http_server.h"

#include <algorithm>
#include <optional>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/http/http_routes.h"
#include "common/http/http_session.h"
#include "common/http/tls_reloader.h"
#include "common/log.h"
#include "common/metrics/metrics.h"
#include "common/quote.h"
#include "common/rate_limited_log.h"

namespace qrm::http {
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

StatusOr<tcp::endpoint> ParseAddress(const std::string& key, const std::string& address) {
  const size_t colon = address.rfind(':');
  auto bad = [&] {
    return InvalidArgumentError(fmt::format(
        "{}: invalid value {} (expected IP:PORT, e.g. 127.0.0.1:9464)", key, Quote(address)));
  };
  if (colon == std::string::npos) return bad();
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port_text = address.substr(colon + 1);
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos) {
    return bad();
  }
  const int port = std::stoi(port_text);
  if (port > 65535) return bad();
  beast::error_code ec;
  auto ip = asio::ip::make_address(host, ec);
  if (ec) return bad();
  return tcp::endpoint(ip, static_cast<unsigned short>(port));
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(std::string address, RouteTable routes, ServerOptions options)
      : address_(std::move(address)),
        routes_(std::move(routes)),
        options_(std::move(options)),
        refused_per_address_(metrics::Default().GetCounter(
            "qrm_http_connections_refused_total",
            "HTTP connections closed at once because a connection bound was reached.",
            {{"reason", "per_address_limit"}})),
        refused_total_(metrics::Default().GetCounter(
            "qrm_http_connections_refused_total",
            "HTTP connections closed at once because a connection bound was reached.",
            {{"reason", "total_limit"}})),
        accept_errors_(metrics::Default().GetCounter(
            "qrm_http_accept_errors_total",
            "accept() failures on the HTTP port, survived by backing off and retrying.")) {}
  ~Impl() { Stop(); }

  Status Start() {
    QRM_ASSIGN_OR_RETURN(auto endpoint, ParseAddress(options_.address_key, address_));
    if (options_.tls) {
      tls_.emplace(*options_.tls, options_.tls_reload_interval);
      QRM_RETURN_IF_ERROR(tls_->Load());
    }
    beast::error_code ec;
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return UnavailableError(
          fmt::format("{} {}: {}", options_.address_key, address_, ec.message()));
    }
    port_ = acceptor_.local_endpoint().port();
    Accept();
    thread_ = std::thread([this] { io_.run(); });
    std::vector<std::string> paths;
    for (const auto& [path, route] : routes_) paths.push_back(path);
    Logger("http")->info("serving {} on {}{}:{}", fmt::join(paths, " "),
                         options_.tls ? "https://" : "http://", endpoint.address().to_string(),
                         port_);
    return Status::Ok();
  }

  void Stop() {
    if (!thread_.joinable()) return;
    asio::post(io_, [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
      timer_.cancel();
    });
    io_.stop();
    thread_.join();
  }

  int port() const { return port_; }

 private:
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (!acceptor_.is_open()) return;  // closed by Stop()
      if (ec) return BackOff(ec);
      backoff_ = std::chrono::milliseconds(0);
      Admit(std::move(socket));
      Accept();
    });
  }

  // Any accept error (EMFILE above all) is survived: the pending connections wait in the
  // queue until descriptors are free again.
  void BackOff(const beast::error_code& ec) {
    accept_errors_.Inc();
    backoff_ =
        std::clamp(backoff_ * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
    errors_.Log(spdlog::level::warn, "accept on {} failed: {}; retrying in {} ms", address_,
                ec.message(), backoff_.count());
    timer_.expires_after(backoff_);
    timer_.async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec && acceptor_.is_open()) Accept();
    });
  }

  void Admit(tcp::socket socket) {
    beast::error_code ec;
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec) return;  // gone already
    const auto it = per_address_.find(peer.address());
    const int from_peer = it == per_address_.end() ? 0 : it->second;
    const ConnectionLimits& limits = options_.limits;
    if (from_peer >= limits.max_per_address || total_ >= limits.max_total) {
      (from_peer >= limits.max_per_address ? refused_per_address_ : refused_total_).Inc();
      refusals_.Log(spdlog::level::warn,
                    "closed a connection from {}: {} (it holds {}, {} open in all)",
                    peer.address().to_string(),
                    from_peer >= limits.max_per_address ? "per-address bound reached"
                                                        : "connection bound reached",
                    from_peer, total_);
      return;  // the socket closes here
    }
    auto slot = std::make_unique<ConnectionSlot>(per_address_, total_, peer.address());
    const SessionOptions session{options_.max_body_bytes, options_.read_timeout};
    if (tls_) {
      std::make_shared<Session<TlsStream>>(std::move(socket), tls_->Current(), routes_, session,
                                           std::move(slot))
          ->Start();
    } else {
      std::make_shared<Session<PlainStream>>(std::move(socket), routes_, session, std::move(slot))
          ->Start();
    }
  }

  // Declared before io_: sessions destroyed with the io_context still release their slots.
  std::map<asio::ip::address, int> per_address_;
  int total_ = 0;
  const std::string address_;
  const RouteTable routes_;
  const ServerOptions options_;
  std::optional<TlsReloader> tls_;
  metrics::Counter& refused_per_address_;
  metrics::Counter& refused_total_;
  metrics::Counter& accept_errors_;
  RateLimitedLog errors_{Logger("http"), "accept error lines", 5};
  RateLimitedLog refusals_{Logger("http"), "refused connection lines"};
  std::chrono::milliseconds backoff_{0};
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  asio::steady_timer timer_{io_};
  std::thread thread_;
  int port_ = 0;
};

namespace {

RouteTable GetRoutes(std::map<std::string, Handler> handlers) {
  RouteTable routes;
  // Each handler moves into its route (a structured binding here hides the move from
  // clang-tidy's performance-unnecessary-value-param).
  for (auto& entry : handlers) routes.emplace(entry.first, GetRoute(std::move(entry.second)));
  return routes;
}

}  // namespace

HttpServer::HttpServer(std::string address, std::map<std::string, Handler> routes,
                       ConnectionLimits limits)
    : impl_(std::make_unique<Impl>(std::move(address), GetRoutes(std::move(routes)),
                                   ServerOptions{.limits = limits})) {}
HttpServer::HttpServer(std::string address, std::map<std::string, Route> routes,
                       ServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(address), std::move(routes), std::move(options))) {}
HttpServer::~HttpServer() = default;
Status HttpServer::Start() {
  return impl_->Start();
}
void HttpServer::Stop() {
  impl_->Stop();
}
int HttpServer::port() const {
  return impl_->port();
}

std::map<std::string, Handler> StandardRoutes(std::function<bool()> ready) {
  return {
      {"/metrics",
       [] {
         return Response{200, "text/plain; version=0.0.4; charset=utf-8",
                         metrics::Default().Exposition()};
       }},
      {"/healthz",
       [] {
         return Response{200, "text/plain; charset=utf-8", "ok\n"};
       }},
      {"/readyz",
       [ready = std::move(ready)] {
         return ready() ? Response{200, "text/plain; charset=utf-8", "ok\n"}
                        : Response{503, "text/plain; charset=utf-8", "not ready\n"};
       }},
  };
}

}  // namespace qrm::http
