// Exchange: the steps of one HTTP(S) exchange with the API server on a private io_context
// (resolve, connect, TLS handshake with the server's name checked, the request), each bounded
// by a deadline and, for a long-running watch, by a stop token another thread may trigger.
// An operation still pending at the deadline or the stop is cancelled by closing the socket.
// Internal to cluster/kube: HttpCall and HttpStream (http_client.h) are built on it.
#pragma once

#include <chrono>
#include <stop_token>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "cluster/kube/http_client.h"
#include "common/status.h"

namespace qrm::kube::internal {

class Exchange {
 public:
  using Clock = std::chrono::steady_clock;

  Exchange(const Url& url, const HttpRequest& request, Clock::time_point deadline,
           std::stop_token stop = {})
      : url_(url), request_(request), deadline_(deadline), stop_(std::move(stop)) {}

  // Later steps (a watch's next read) get a new deadline.
  void set_deadline(Clock::time_point deadline) { deadline_ = deadline; }
  bool stopped() const { return stop_.stop_requested(); }

  // Connects (with TLS when the URL says https) and calls talk(stream) with the open stream,
  // a boost::beast::tcp_stream or a boost::beast::ssl_stream<boost::beast::tcp_stream>.
  template <typename Talk>
  auto Open(const TlsConfig& tls, Talk&& talk)
      -> decltype(talk(std::declval<boost::beast::tcp_stream&>()));

  // Starts an operation with start(handler) and runs it to its end, the deadline or the stop;
  // then cancel() is called and the result is timed_out (deadline) or operation_aborted (stop).
  template <typename Start, typename Cancel>
  boost::beast::error_code Wait(Start&& start, Cancel&& cancel);

  // The request as Beast writes it (Host, User-Agent, Connection: close, the headers, body).
  StatusOr<boost::beast::http::request<boost::beast::http::string_body>> BuildRequest() const;
  // A failed step as a Status naming the method, the URL and the step.
  Status Error(std::string_view step, const boost::beast::error_code& ec) const;

 private:
  Status Connect(boost::beast::tcp_stream& stream);
  StatusOr<boost::asio::ssl::context> MakeTlsContext(const TlsConfig& tls) const;
  Status Handshake(boost::beast::ssl_stream<boost::beast::tcp_stream>& stream,
                   const TlsConfig& tls);
  bool RunOnce();  // runs handlers until one ran or 100 ms passed; false past deadline or stop

  const Url& url_;
  const HttpRequest& request_;
  Clock::time_point deadline_;
  std::stop_token stop_;
  boost::asio::io_context ioc_;
};

template <typename Talk>
auto Exchange::Open(const TlsConfig& tls, Talk&& talk)
    -> decltype(talk(std::declval<boost::beast::tcp_stream&>())) {
  if (!url_.tls) {
    boost::beast::tcp_stream stream(ioc_);
    if (Status s = Connect(stream); !s.ok()) return s;
    return talk(stream);
  }
  StatusOr<boost::asio::ssl::context> ctx = MakeTlsContext(tls);
  if (!ctx.ok()) return ctx.status();
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream(ioc_, *ctx);
  if (Status s = Connect(boost::beast::get_lowest_layer(stream)); !s.ok()) return s;
  if (Status s = Handshake(stream, tls); !s.ok()) return s;
  return talk(stream);
}

template <typename Start, typename Cancel>
boost::beast::error_code Exchange::Wait(Start&& start, Cancel&& cancel) {
  boost::beast::error_code result;
  bool done = false;
  start([&](boost::beast::error_code ec, auto&&...) {
    result = ec;
    done = true;
  });
  ioc_.restart();
  while (!done && RunOnce()) {
  }
  if (done) return result;
  cancel();
  ioc_.restart();
  ioc_.run();  // the cancelled operation's handler
  return stopped() ? boost::asio::error::operation_aborted : boost::asio::error::timed_out;
}

}  // namespace qrm::kube::internal
