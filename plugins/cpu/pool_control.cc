#include "plugins/cpu/pool_control.h"

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json_string.h"
#include "common/quote.h"
#include "plugins/cpu/pools.h"

namespace qrm::cpu {
namespace {

// `what` says where the size came from ("pool control", "--set-pools"); `is_auto`: the value
// was the word auto.
Status SetSize(std::string_view what, PoolSizes* sizes, std::string_view key,
               std::optional<int64_t> value, std::string_view text, bool is_auto) {
  std::optional<int>* field = key == "reclaimed" ? &sizes->reclaimed
                              : key == "shared"  ? &sizes->shared
                                                 : nullptr;
  if (field == nullptr) {
    return InvalidArgumentError(
        fmt::format("{}: unknown key {} (expected \"reclaimed\" or \"shared\")", what, Quote(key)));
  }
  if (is_auto && field == &sizes->reclaimed) {
    *field = kReclaimedAuto;
    return Status::Ok();
  }
  // The shared pool always keeps a CPU; a reclaimed pool of 0 means reclaimed_cores run in
  // the shared pool.
  const int64_t min = field == &sizes->shared ? 1 : 0;
  if (!value || *value < min || *value > kMaxPoolSize) {
    return InvalidArgumentError(fmt::format(
        "{}: key \"{}\": invalid value {} (expected a whole number of CPUs from {} to {})", what,
        key, text, min, kMaxPoolSize));
  }
  *field = static_cast<int>(*value);
  return Status::Ok();
}

Status NeedsOne(std::string_view what, const PoolSizes& sizes, std::string_view text) {
  if (sizes.reclaimed == kReclaimedAuto && sizes.shared) {
    return InvalidArgumentError(
        fmt::format("{}: {}: reclaimed auto leaves no shared size to set (give one of them)", what,
                    Quote(text)));
  }
  if (sizes.reclaimed || sizes.shared) return Status::Ok();
  return InvalidArgumentError(
      fmt::format("{}: {} names no pool (expected reclaimed and/or shared)", what, Quote(text)));
}

Status FsyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open", path);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? Status::Ok() : ErrnoError(err, "fsync", path);
}

}  // namespace

StatusOr<PoolSizes> ParsePoolControl(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(fmt::format("pool control: invalid JSON {} at offset {}: {}",
                                            Quote(json), doc.GetErrorOffset(),
                                            rapidjson::GetParseError_En(doc.GetParseError())));
  }
  if (!doc.IsObject()) {
    return InvalidArgumentError(fmt::format("pool control: {} is not a JSON object", Quote(json)));
  }
  PoolSizes sizes;
  for (const auto& m : doc.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    std::optional<int64_t> value;
    std::string text;
    const bool is_auto = m.value.IsString() && JsonStringView(m.value) == "auto";
    if (m.value.IsInt64()) {
      value = m.value.GetInt64();
      text = std::to_string(*value);
    } else if (m.value.IsString()) {
      text = Quote(JsonStringView(m.value));
    } else if (m.value.IsNumber()) {
      text = fmt::format("{}", m.value.GetDouble());
    } else {
      text = m.value.IsBool() ? (m.value.GetBool() ? "true" : "false") : "(not a number)";
    }
    QRM_RETURN_IF_ERROR(SetSize("pool control", &sizes, key, value, text, is_auto));
  }
  QRM_RETURN_IF_ERROR(NeedsOne("pool control", sizes, json));
  return sizes;
}

StatusOr<PoolSizes> ParseSetPools(std::string_view text) {
  PoolSizes sizes;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgumentError(
          fmt::format("--set-pools: {} is not POOL=SIZE (e.g. reclaimed=52)", Quote(item)));
    }
    const std::string_view key = item.substr(0, eq);
    const std::string_view number = item.substr(eq + 1);
    int64_t value = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    const bool whole = ec == std::errc() && end == number.data() + number.size();
    QRM_RETURN_IF_ERROR(SetSize("--set-pools", &sizes, key,
                                whole ? std::optional(value) : std::nullopt, Quote(number),
                                number == "auto"));
  }
  QRM_RETURN_IF_ERROR(NeedsOne("--set-pools", sizes, text));
  return sizes;
}

std::string FormatPoolControl(const PoolSizes& sizes) {
  std::vector<std::string> members;
  if (sizes.reclaimed) {
    members.push_back(fmt::format("\"reclaimed\":{}", sizes.reclaimed == kReclaimedAuto
                                                          ? std::string("\"auto\"")
                                                          : std::to_string(*sizes.reclaimed)));
  }
  if (sizes.shared) members.push_back(fmt::format("\"shared\":{}", *sizes.shared));
  return fmt::format("{{{}}}\n", fmt::join(members, ","));
}

Status WritePoolControlFile(const std::string& path, const PoolSizes& sizes) {
  const std::filesystem::path target(path);
  const std::string dir =
      target.parent_path().empty() ? std::string(".") : target.parent_path().string();
  // Built by appending: GCC 12 at -O3 reports a false -Wrestrict for "." + string + "...".
  std::string name = ".";
  name += target.filename().string();
  name += ".tmp-XXXXXX";
  std::string temp = (std::filesystem::path(dir) / name).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return ErrnoError(errno, "create temp file in", dir);
  const std::string text = FormatPoolControl(sizes);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      return ErrnoError(err, "write", temp);
    }
    done += static_cast<size_t>(n);
  }
  // The file is read by the plugin (possibly another user); 0644 like any config file.
  const bool ok = ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(temp.c_str());
    return ErrnoError(err, "sync", temp);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int rename_err = errno;
    ::unlink(temp.c_str());
    return ErrnoError(rename_err, "rename over", path);
  }
  return FsyncPath(dir, O_RDONLY | O_DIRECTORY);
}

StatusOr<PoolSizes> ReadPoolControlFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ErrnoError(errno, "open", path);
  std::stringstream text;
  text << in.rdbuf();
  StatusOr<PoolSizes> sizes = ParsePoolControl(text.str());
  if (!sizes.ok()) return sizes.status().WithContext(path);
  return sizes;
}

}  // namespace qrm::cpu
