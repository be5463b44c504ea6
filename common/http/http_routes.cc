#include "common/http/http_routes.h"

#include <algorithm>
#include <exception>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/log.h"
#include "common/quote.h"

namespace qrm::http {
namespace beast = boost::beast;

namespace {

bool Lists(const Route& route, std::string_view method) {
  return std::find(route.methods.begin(), route.methods.end(), method) != route.methods.end();
}

bool Takes(const Route& route, std::string_view method) {
  return Lists(route, method) || (method == "HEAD" && Lists(route, "GET"));
}

std::string AllowHeader(const Route& route) {
  std::vector<std::string> methods = route.methods;
  if (Lists(route, "GET") && !Lists(route, "HEAD")) methods.emplace_back("HEAD");
  return fmt::format("{}", fmt::join(methods, ", "));
}

// A handler that throws must not take the server thread down with it.
Response Call(const Route& route, const Request& request) {
  try {
    return route.handler(request);
  } catch (const std::exception& e) {
    Logger("http")->error("{} {}: handler failed: {}", request.method, Quote(request.target),
                          e.what());
    return Response{500, "text/plain; charset=utf-8", "internal error\n"};
  }
}

}  // namespace

BeastResponse ErrorAnswer(unsigned version, int status, std::string body) {
  BeastResponse response;
  response.version(version);
  response.keep_alive(false);
  response.result(static_cast<unsigned>(status));
  response.set(beast::http::field::content_type, "text/plain; charset=utf-8");
  response.body() = std::move(body);
  response.prepare_payload();
  return response;
}

BeastResponse Answer(const RouteTable& routes, BeastRequest& request) {
  BeastResponse response;
  response.version(request.version());
  response.keep_alive(request.keep_alive());
  const std::string target(request.target());
  const std::string path = target.substr(0, target.find('?'));
  const std::string method(request.method_string());
  const auto route = routes.find(path);
  if (route == routes.end()) {
    response.result(beast::http::status::not_found);
    response.body() = "not found\n";
  } else if (!Takes(route->second, method)) {
    response.result(beast::http::status::method_not_allowed);
    response.set(beast::http::field::allow, AllowHeader(route->second));
    response.body() = fmt::format("method {} not allowed on {} (allowed: {})\n", method, path,
                                  AllowHeader(route->second));
  } else {
    Request in{method, target, std::string(request[beast::http::field::content_type]),
               std::move(request.body())};
    Response r = Call(route->second, in);
    response.result(static_cast<unsigned>(r.status));
    response.set(beast::http::field::content_type, r.content_type);
    if (method != "HEAD") response.body() = std::move(r.body);
  }
  response.prepare_payload();
  return response;
}

Route GetRoute(Handler handler) {
  return Route{{"GET"}, [handler = std::move(handler)](const Request&) { return handler(); }};
}

}  // namespace qrm::http
