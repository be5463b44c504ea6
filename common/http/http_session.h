// One connection of the HTTP server, over plain TCP or TLS: (handshake,) read a request,
// answer it, repeat while keep-alive. Internal to common/http.
//
// Every read (the TLS handshake, then each request's headers and body) must finish within
// `read_timeout`, so a client trickling bytes cannot hold its slot longer than that; a body
// over `max_body_bytes` is answered 413 and the connection closed.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "common/http/http_routes.h"

namespace qrm::http {

// Frees a connection's place in the server's counts when the connection ends (the server
// owns the counts; sessions only ever run on its thread).
class ConnectionSlot {
 public:
  ConnectionSlot(std::map<boost::asio::ip::address, int>& per_address, int& total,
                 boost::asio::ip::address address)
      : per_address_(per_address), total_(total), address_(std::move(address)) {
    ++per_address_[address_];
    ++total_;
  }
  ~ConnectionSlot() {
    if (--per_address_[address_] == 0) per_address_.erase(address_);
    --total_;
  }
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;

 private:
  std::map<boost::asio::ip::address, int>& per_address_;
  int& total_;
  const boost::asio::ip::address address_;
};

struct SessionOptions {
  size_t max_body_bytes = 0;
  std::chrono::milliseconds read_timeout{0};
};

using PlainStream = boost::beast::tcp_stream;
using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // Plain TCP.
  Session(boost::asio::ip::tcp::socket socket, const RouteTable& routes, SessionOptions options,
          std::unique_ptr<ConnectionSlot> slot) requires(!kTls)
      : stream_(std::move(socket)), routes_(routes), options_(options), slot_(std::move(slot)) {}

  // TLS: `context` is kept alive by the session (a reload may replace the server's).
  Session(boost::asio::ip::tcp::socket socket, std::shared_ptr<boost::asio::ssl::context> context,
          const RouteTable& routes, SessionOptions options,
          std::unique_ptr<ConnectionSlot> slot) requires(kTls)
      : context_(std::move(context)),
        stream_(std::move(socket), *context_),
        routes_(routes),
        options_(options),
        slot_(std::move(slot)) {}

  void Start() {
    if constexpr (kTls) {
      Lowest().expires_after(options_.read_timeout);
      stream_.async_handshake(boost::asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](boost::beast::error_code ec) {
                                if (!ec) self->Read();
                              });
    } else {
      Read();
    }
  }

 private:
  boost::beast::tcp_stream& Lowest() { return boost::beast::get_lowest_layer(stream_); }

  void Read() {
    parser_.emplace();
    parser_->body_limit(options_.max_body_bytes);
    Lowest().expires_after(options_.read_timeout);
    boost::beast::http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](boost::beast::error_code ec, size_t) {
          if (ec == boost::beast::http::error::body_limit) return self->TooLarge();
          if (!ec) self->Respond(Answer(self->routes_, self->parser_->get()));
        });
  }

  void TooLarge() {
    Respond(
        ErrorAnswer(parser_->get().version(), 413,
                    "request body over " + std::to_string(options_.max_body_bytes) + " bytes\n"));
  }

  void Respond(BeastResponse answer) {
    auto response = std::make_shared<BeastResponse>(std::move(answer));
    Lowest().expires_after(options_.read_timeout);
    boost::beast::http::async_write(
        stream_, *response,
        [self = this->shared_from_this(), response](boost::beast::error_code ec, size_t) {
          if (ec || !response->keep_alive()) return self->Close();
          self->Read();
        });
  }

  void Close() {
    if constexpr (kTls) {
      Lowest().expires_after(options_.read_timeout);
      stream_.async_shutdown([self = this->shared_from_this()](boost::beast::error_code) {});
    } else {
      boost::beast::error_code ignored;
      stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
    }
  }

  std::shared_ptr<boost::asio::ssl::context> context_;  // before stream_, which refers to it
  Stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  const RouteTable& routes_;
  const SessionOptions options_;
  std::unique_ptr<ConnectionSlot> slot_;
};

}  // namespace qrm::http
