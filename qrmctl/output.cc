#include "qrmctl/output.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

namespace qrm::ctl {

int Fail(const Status& s) {
  std::fprintf(stderr, "qrmctl: %s\n", s.message().c_str());
  return 1;
}

int PrintJson(const google::protobuf::Message& m) {
  std::string json;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  if (!google::protobuf::util::MessageToJsonString(m, &json, opts).ok()) {
    return Fail(InternalError("cannot render the answer as JSON"));
  }
  std::fputs(json.c_str(), stdout);
  return 0;
}

std::string Time(int64_t unix_seconds) {
  if (unix_seconds == 0) return "-";
  std::time_t t = unix_seconds;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], width[i]);
    }
    std::puts(line.c_str());
  }
}

}  // namespace qrm::ctl
