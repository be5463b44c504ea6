#include "machine/sysfs.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "common/id_list.h"
#include "common/numa_mask.h"

namespace qrm::machine::sysfs {

namespace fs = std::filesystem;

namespace {

// sysfs attributes are at most a page; procfs meminfo a few KiB. Anything larger is not one
// of the files this library reads.
constexpr size_t kMaxFileBytes = 1 << 20;

// On failure `open_errno` is the errno of open(2) (0 when open succeeded).
Status ReadInto(const std::string& path, std::string& out, int* open_errno = nullptr) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (open_errno != nullptr) *open_errno = errno;
    return ErrnoError(errno, "read", path);
  }
  out.clear();
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return ErrnoError(err, "read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > kMaxFileBytes) {
      ::close(fd);
      return InvalidArgumentError(fmt::format("{}: larger than {} bytes", path, kMaxFileBytes));
    }
  }
  ::close(fd);
  return Status::Ok();
}

template <typename T>
StatusOr<T> ParseNumber(const std::string& path, std::string_view text, std::string_view what) {
  T value{};
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc() || ptr != last) {
    return InvalidArgumentError(fmt::format("{}: value \"{}\" is not {}", path, text, what));
  }
  return value;
}

}  // namespace

StatusOr<std::string> ReadFile(const std::string& path) {
  std::string out;
  QRM_RETURN_IF_ERROR(ReadInto(path, out));
  return out;
}

StatusOr<std::string> ReadValue(const std::string& path) {
  std::string out;
  QRM_RETURN_IF_ERROR(ReadInto(path, out));
  return std::string(TrimSysfsValue(out));
}

StatusOr<std::optional<std::string>> ReadOptionalValue(const std::string& path) {
  std::string out;
  int open_errno = 0;
  Status status = ReadInto(path, out, &open_errno);
  if (open_errno == ENOENT || open_errno == ENOTDIR) return std::optional<std::string>();
  QRM_RETURN_IF_ERROR(status);
  return std::optional<std::string>(std::string(TrimSysfsValue(out)));
}

StatusOr<int64_t> ParseInt(const std::string& path, std::string_view text) {
  return ParseNumber<int64_t>(path, text, "an integer");
}

StatusOr<uint64_t> ParseUint(const std::string& path, std::string_view text) {
  return ParseNumber<uint64_t>(path, text, "a non-negative integer");
}

StatusOr<CpuSet> ParseCpuList(const std::string& path, std::string_view text) {
  auto set = CpuSet::Parse(text);
  if (!set.ok()) return set.status().WithContext(path);
  return set;
}

StatusOr<std::vector<int>> ParseNodeList(const std::string& path, std::string_view text) {
  auto ranges = ParseIdList(text, NumaMask::kMaxNodes - 1, "NUMA node list");
  if (!ranges.ok()) return ranges.status().WithContext(path);
  std::vector<int> ids;
  for (const IdRange& r : *ranges) {
    for (int id = r.first; id <= r.last; ++id) ids.push_back(id);
  }
  return ids;
}

StatusOr<int64_t> ReadInt(const std::string& path) {
  QRM_ASSIGN_OR_RETURN(auto text, ReadValue(path));
  return ParseInt(path, text);
}

StatusOr<uint64_t> ReadUint(const std::string& path) {
  QRM_ASSIGN_OR_RETURN(auto text, ReadValue(path));
  return ParseUint(path, text);
}

StatusOr<CpuSet> ReadCpuList(const std::string& path) {
  QRM_ASSIGN_OR_RETURN(auto text, ReadValue(path));
  return ParseCpuList(path, text);
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

StatusOr<std::vector<std::string>> ListDir(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(path, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return names;
    return ErrnoError(ec.value(), "list", path);
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return ErrnoError(ec.value(), "list", path);
    names.push_back(it->path().filename().string());
  }
  if (ec) return ErrnoError(ec.value(), "list", path);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace qrm::machine::sysfs
