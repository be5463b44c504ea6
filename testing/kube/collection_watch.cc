// List pages and watches of an ObjectCollection, with the API server's resourceVersion rules.
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "testing/kube/collection_state.h"

namespace qrm::testing::collection {
namespace {

bool Sees(const CollectionWatch& w, const std::string& key) {
  return w.namespace_name.empty() || NamespaceOf(key) == w.namespace_name;
}

std::string EventLine(std::string_view type, const std::string& object) {
  return fmt::format(R"({{"type":"{}","object":{}}})", type, object);
}

// The ERROR event a watch from a compacted resourceVersion gets (etcd3 watcher's wording).
std::string ExpiredEvent(int64_t asked, int64_t oldest) {
  return EventLine("ERROR",
                   fmt::format(R"({{"kind":"Status","apiVersion":"v1","metadata":{{}},)"
                               R"("status":"Failure","message":"too old resource version: {} )"
                               R"j(({})","reason":"Expired","code":410}})j",
                               asked, oldest));
}

std::optional<int64_t> ParseVersion(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || v < 0) return std::nullopt;
  return v;
}

ApiResponse Watch(State& s, const ApiRequest& r, const std::string& ns) {
  const std::string rv_text = QueryValue(r.query, "resourceVersion");
  const std::optional<int64_t> rv = ParseVersion(rv_text);
  if (!rv_text.empty() && !rv) {
    return StatusAnswer(400, "BadRequest",
                        fmt::format("resourceVersion: Invalid value: \"{}\"", rv_text));
  }
  std::optional<WatchFeed::Clock::time_point> deadline;
  if (const std::optional<int64_t> t = ParseVersion(QueryValue(r.query, "timeoutSeconds"))) {
    deadline = WatchFeed::Clock::now() + std::chrono::seconds(*t);
  }
  ApiResponse answer;
  answer.feed = std::make_shared<WatchFeed>(deadline);
  MutexLock lock(s.mu);
  ++s.watch_requests;
  if (rv && *rv != 0 && *rv < s.compacted) {
    answer.feed->Push(ExpiredEvent(*rv, s.compacted + 1));
    answer.feed->Close();
    return answer;
  }
  CollectionWatch w{answer.feed, ns, QueryValue(r.query, "allowWatchBookmarks") == "true"};
  if (!rv || *rv == 0) {  // the current state first, as ADDED events
    for (const auto& [key, json] : s.objects) {
      if (Sees(w, key)) answer.feed->Push(EventLine("ADDED", json));
    }
  } else {
    for (const CollectionEvent& e : s.history) {
      if (e.version > *rv && Sees(w, e.key)) answer.feed->Push(e.line);
    }
  }
  s.watches.push_back(std::move(w));
  return answer;
}

std::string ListBody(const State& s, int64_t version, const std::vector<std::string>& items,
                     const std::string& next) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ",") + item;
  const std::string cont = next.empty() ? "" : fmt::format(R"(,"continue":"{}")", next);
  return fmt::format(
      R"({{"kind":"{}List","apiVersion":"{}","metadata":{{"resourceVersion":"{}"{}}},)"
      R"("items":[{}]}})",
      s.options.kind, s.options.api_version, version, cont, joined);
}

// One page from `offset` of the snapshot `items` taken at `version`.
ApiResponse Page(State& s, int64_t version, const std::vector<std::string>& items, size_t offset,
                 size_t limit) QRM_REQUIRES(s.mu) {
  const size_t end = limit == 0 ? items.size() : std::min(items.size(), offset + limit);
  std::string next;
  if (end < items.size()) {
    next = fmt::format("snap-{}-{}", version, end);
    s.snapshots[next] = {version, items};
  }
  const std::vector<std::string> page(items.begin() + static_cast<ptrdiff_t>(offset),
                                      items.begin() + static_cast<ptrdiff_t>(end));
  return ApiResponse{200, ListBody(s, version, page, next)};
}

ApiResponse List(State& s, const ApiRequest& r, const std::string& ns) {
  const size_t limit = ParseVersion(QueryValue(r.query, "limit")).value_or(0);
  const std::string token = QueryValue(r.query, "continue");
  MutexLock lock(s.mu);
  ++s.list_requests;
  if (!token.empty()) {
    const auto snap = s.snapshots.find(token);
    if (snap == s.snapshots.end() || snap->second.first <= s.compacted) {
      return StatusAnswer(410, "Expired",
                          "The provided continue parameter is too old to display a consistent "
                          "list result. You can start a new list without the continue "
                          "parameter.");
    }
    const size_t offset = std::stoul(token.substr(token.rfind('-') + 1));
    auto [version, items] = snap->second;
    return Page(s, version, items, offset, limit);
  }
  std::vector<std::string> items;
  for (const auto& [key, json] : s.objects) {
    if (ns.empty() || NamespaceOf(key) == ns) items.push_back(json);
  }
  return Page(s, s.version, items, 0, limit);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
        HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i] == '+' ? ' ' : text[i];
    }
  }
  return out;
}

}  // namespace

std::string Serialize(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  v.Accept(w);
  return buffer.GetString();
}

std::string NamespaceOf(const std::string& key) {
  const size_t slash = key.find('/');
  return slash == std::string::npos ? "" : key.substr(0, slash);
}

void Emit(State& s, const std::string& type, const std::string& key, const std::string& json) {
  CollectionEvent e{s.version, key, EventLine(type, json)};
  std::erase_if(s.watches, [](const CollectionWatch& w) { return w.feed->cancelled(); });
  for (const CollectionWatch& w : s.watches) {
    if (Sees(w, key)) w.feed->Push(e.line);
  }
  s.history.push_back(std::move(e));
}

std::string QueryValue(const std::string& query, std::string_view name) {
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string_view pair(query.data() + start, end - start);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      return eq == std::string_view::npos ? "" : PercentDecoded(pair.substr(eq + 1));
    }
    start = end + 1;
  }
  return "";
}

ApiResponse ListOrWatch(State& s, const ApiRequest& r, const std::string& namespace_name) {
  const std::string watch = QueryValue(r.query, "watch");
  if (watch == "1" || watch == "true") return Watch(s, r, namespace_name);
  return List(s, r, namespace_name);
}

void Bookmark(State& s) {
  MutexLock lock(s.mu);
  const std::string line = EventLine(
      "BOOKMARK", fmt::format(R"({{"kind":"{}","apiVersion":"{}","metadata":{{"resourceVersion":)"
                              R"("{}"}}}})",
                              s.options.kind, s.options.api_version, s.version));
  for (const CollectionWatch& w : s.watches) {
    if (w.bookmarks) w.feed->Push(line);
  }
}

void CloseWatches(State& s) {
  MutexLock lock(s.mu);
  for (const CollectionWatch& w : s.watches) w.feed->Close();
  s.watches.clear();
}

}  // namespace qrm::testing::collection
