// What the proxy's per-call reactors share. Everything here outlives the gRPC server.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include "cri-shim/counters.h"
#include "cri-shim/method_table.h"
#include "cri-shim/runtime_channels.h"

namespace qrm::shim {

class Interceptors;

struct ProxyDeps {
  const MethodTable& methods;
  RuntimeChannels& channels;
  ShimCounters& counters;
  Interceptors& interceptors;
  boost::asio::thread_pool& pool;  // blocking work of intercepted calls
};

}  // namespace qrm::shim
