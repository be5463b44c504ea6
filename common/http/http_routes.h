// The answer to one parsed request from the route table: 404 for an unknown path, 405 with an
// Allow header for a method the path does not take, else the handler's response (without the
// body for HEAD). Internal to common/http.
#pragma once

#include <map>
#include <string>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "common/http/http_server.h"

namespace qrm::http {

using RouteTable = std::map<std::string, Route>;
using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;
using BeastResponse = boost::beast::http::response<boost::beast::http::string_body>;

BeastResponse Answer(const RouteTable& routes, BeastRequest& request);

// A plain-text error answer (413 for a body over the bound, ...) closing the connection.
BeastResponse ErrorAnswer(unsigned version, int status, std::string body);

// The GET-only route of a handler that reads nothing of the request.
Route GetRoute(Handler handler);

}  // namespace qrm::http
