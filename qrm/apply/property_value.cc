#include "qrm/apply/property_value.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "common/cpu_set.h"
#include "common/id_list.h"
#include "common/numa_mask.h"
#include "common/quote.h"

namespace qrm::apply {
namespace {

using ::runtime::v1::HugepageLimit;
using ::runtime::v1::LinuxContainerResources;

// Every error of this file starts the same way so operators can grep for the plugin.
std::string What(std::string_view resource, OciProperty p) {
  return fmt::format("resource {}: {} value", Quote(resource), OciPropertyName(p));
}

Status ValueError(std::string_view resource, OciProperty p, std::string_view value,
                  std::string_view reason) {
  return InvalidArgumentError(fmt::format("{} {}: {}", What(resource, p), Quote(value), reason));
}

// std::from_chars already rejects '+', whitespace and hex, and reports overflow instead of
// wrapping; all that is left is insisting that it consumed the whole text.
template <typename Int>
std::optional<std::string> ParseDecimal(std::string_view text, Int& out) {
  if (text.empty()) return "is empty, expected a decimal integer";
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc::result_out_of_range) {
    return fmt::format("does not fit in {}", std::is_signed_v<Int> ? "int64" : "uint64");
  }
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return std::string("is not a decimal integer");
  }
  return std::nullopt;
}

StatusOr<int64_t> ParseInt(std::string_view resource, OciProperty p, std::string_view value) {
  int64_t n = 0;
  if (auto err = ParseDecimal(value, n)) return ValueError(resource, p, value, *err);
  switch (p) {
    case OciProperty::kCpuQuota:
    case OciProperty::kMemorySwapLimitInBytes:
      // -1 is the runtime's "no limit"; other negatives have no meaning to the kernel.
      if (n < -1) return ValueError(resource, p, value, "must be -1 (no limit) or >= 0");
      break;
    case OciProperty::kOomScoreAdj:
      if (n < -1000 || n > 1000) return ValueError(resource, p, value, "must be in [-1000, 1000]");
      break;
    default:
      if (n < 0) return ValueError(resource, p, value, "must be >= 0");
  }
  return n;
}

StatusOr<std::string> ParseCpuset(std::string_view resource, OciProperty p,
                                  std::string_view value) {
  // An empty cpuset in CRI means "leave unchanged", so owning it with "" would silently
  // leave the container unpinned; no allocation is ever the empty set.
  if (value.empty()) return ValueError(resource, p, value, "is empty");
  const int max_id =
      p == OciProperty::kCpusetMems ? NumaMask::kMaxNodes - 1 : CpuSet::kDefaultMaxCpuId;
  // ParseIdList is the grammar CpuSet::Parse uses; calling it directly lets its message
  // read `resource "cpu": CpusetCpus value "3-1": range "3-1" starts above its end`.
  StatusOr<std::vector<IdRange>> ranges = ParseIdList(value, max_id, What(resource, p));
  if (!ranges.ok()) return ranges.status();
  return FormatIdRanges(*ranges);
}

bool IsPowerOfTwo(uint64_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

// Page size as the kernel names hugetlb cgroup files (mm/hugetlb_cgroup.c mem_fmt) and
// the kubelet fills HugepageLimit.page_size: "64KB", "2MB", "1GB", "16GB". Returns bytes.
std::optional<uint64_t> ParsePageSize(std::string_view text) {
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"KB", uint64_t{1} << 10}, {"MB", uint64_t{1} << 20}, {"GB", uint64_t{1} << 30}};
  for (const auto& [unit, scale] : kUnits) {
    if (text.size() <= unit.size() || !text.ends_with(unit)) continue;
    const std::string_view digits = text.substr(0, text.size() - unit.size());
    if (digits.front() == '0') return std::nullopt;
    uint64_t n = 0;
    if (ParseDecimal(digits, n)) return std::nullopt;
    // The kernel moves to the next unit at 1024, so "2048KB" names no file.
    if (!IsPowerOfTwo(n) || (scale != (uint64_t{1} << 30) && n >= 1024)) return std::nullopt;
    if (n > (UINT64_MAX / scale)) return std::nullopt;
    return n * scale;
  }
  return std::nullopt;
}

Status ParseHugepages(std::string_view resource, OciProperty p, std::string_view value,
                      LinuxContainerResources* out) {
  if (value.empty()) return ValueError(resource, p, value, "is empty, expected PAGESIZE:LIMIT");
  std::map<uint64_t, HugepageLimit> by_size;  // sorted by page size: canonical order
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = value.find(',', pos);
    const std::size_t end = comma == std::string_view::npos ? value.size() : comma;
    const std::string_view element = value.substr(pos, end - pos);
    const std::size_t colon = element.find(':');
    if (colon == std::string_view::npos) {
      return ValueError(resource, p, value,
                        fmt::format("element {} is not PAGESIZE:LIMIT", Quote(element)));
    }
    const std::string_view size_text = element.substr(0, colon);
    const std::string_view limit_text = element.substr(colon + 1);
    const std::optional<uint64_t> size = ParsePageSize(size_text);
    if (!size) {
      return ValueError(
          resource, p, value,
          fmt::format("page size {} is not a hugepage size such as 2MB or 1GB", Quote(size_text)));
    }
    uint64_t limit = 0;
    if (auto err = ParseDecimal(limit_text, limit)) {
      return ValueError(resource, p, value,
                        fmt::format("limit {} for {} {}", Quote(limit_text), size_text, *err));
    }
    HugepageLimit entry;
    entry.set_page_size(std::string(size_text));
    entry.set_limit(limit);
    if (!by_size.emplace(*size, std::move(entry)).second) {
      return ValueError(resource, p, value,
                        fmt::format("page size {} appears more than once", Quote(size_text)));
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  out->clear_hugepage_limits();
  for (auto& [size, entry] : by_size) *out->add_hugepage_limits() = std::move(entry);
  return Status::Ok();
}

Status CheckUnifiedText(std::string_view resource, OciProperty p, std::string_view value,
                        std::string_view kind, std::string_view text) {
  if (text.find('\0') != std::string_view::npos) {
    return ValueError(resource, p, value, fmt::format("{} {} contains NUL", kind, Quote(text)));
  }
  return Status::Ok();
}

Status ParseUnified(std::string_view resource, OciProperty p, std::string_view value,
                    LinuxContainerResources* out) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(value.data(), value.size());
  if (doc.HasParseError()) {
    return ValueError(resource, p, value,
                      fmt::format("invalid JSON at offset {}: {}", doc.GetErrorOffset(),
                                  rapidjson::GetParseError_En(doc.GetParseError())));
  }
  if (!doc.IsObject()) return ValueError(resource, p, value, "is not a JSON object");
  std::map<std::string, std::string> entries;
  for (const auto& member : doc.GetObject()) {
    const std::string key(member.name.GetString(), member.name.GetStringLength());
    if (key.empty()) return ValueError(resource, p, value, "has an empty key");
    // Keys are file names inside the container's cgroup; a '/' would escape it.
    if (key.find('/') != std::string::npos) {
      return ValueError(resource, p, value, fmt::format("key {} contains '/'", Quote(key)));
    }
    QRM_RETURN_IF_ERROR(CheckUnifiedText(resource, p, value, "key", key));
    if (!member.value.IsString()) {
      return ValueError(resource, p, value,
                        fmt::format("value of key {} is not a string", Quote(key)));
    }
    std::string text(member.value.GetString(), member.value.GetStringLength());
    QRM_RETURN_IF_ERROR(CheckUnifiedText(resource, p, value, "value", text));
    // RapidJSON keeps duplicate members; which one wins would be the runtime's guess.
    if (!entries.emplace(key, std::move(text)).second) {
      return ValueError(resource, p, value, fmt::format("key {} appears twice", Quote(key)));
    }
  }
  out->clear_unified();
  for (auto& [key, text] : entries) (*out->mutable_unified())[key] = std::move(text);
  return Status::Ok();
}

}  // namespace

Status ParsePropertyValue(std::string_view resource, OciProperty p, std::string_view value,
                          LinuxContainerResources* out) {
  switch (p) {
    case OciProperty::kCpusetCpus:
    case OciProperty::kCpusetMems: {
      StatusOr<std::string> set = ParseCpuset(resource, p, value);
      if (!set.ok()) return set.status();
      if (p == OciProperty::kCpusetCpus) {
        out->set_cpuset_cpus(*std::move(set));
      } else {
        out->set_cpuset_mems(*std::move(set));
      }
      return Status::Ok();
    }
    case OciProperty::kHugepageLimits: return ParseHugepages(resource, p, value, out);
    case OciProperty::kUnified: return ParseUnified(resource, p, value, out);
    case OciProperty::kCpuPeriod:
    case OciProperty::kCpuQuota:
    case OciProperty::kCpuShares:
    case OciProperty::kMemoryLimitInBytes:
    case OciProperty::kOomScoreAdj:
    case OciProperty::kMemorySwapLimitInBytes: break;
  }
  StatusOr<int64_t> n = ParseInt(resource, p, value);
  if (!n.ok()) return n.status();
  switch (p) {
    case OciProperty::kCpuPeriod: out->set_cpu_period(*n); break;
    case OciProperty::kCpuQuota: out->set_cpu_quota(*n); break;
    case OciProperty::kCpuShares: out->set_cpu_shares(*n); break;
    case OciProperty::kMemoryLimitInBytes: out->set_memory_limit_in_bytes(*n); break;
    case OciProperty::kOomScoreAdj: out->set_oom_score_adj(*n); break;
    case OciProperty::kMemorySwapLimitInBytes: out->set_memory_swap_limit_in_bytes(*n); break;
    default: break;
  }
  return Status::Ok();
}

void ApplyOwnedField(OciProperty p, const LinuxContainerResources& from,
                     LinuxContainerResources* to) {
  switch (p) {
    case OciProperty::kCpuPeriod: to->set_cpu_period(from.cpu_period()); return;
    case OciProperty::kCpuQuota: to->set_cpu_quota(from.cpu_quota()); return;
    case OciProperty::kCpuShares: to->set_cpu_shares(from.cpu_shares()); return;
    case OciProperty::kMemoryLimitInBytes:
      to->set_memory_limit_in_bytes(from.memory_limit_in_bytes());
      return;
    case OciProperty::kOomScoreAdj: to->set_oom_score_adj(from.oom_score_adj()); return;
    case OciProperty::kCpusetCpus: to->set_cpuset_cpus(from.cpuset_cpus()); return;
    case OciProperty::kCpusetMems: to->set_cpuset_mems(from.cpuset_mems()); return;
    case OciProperty::kMemorySwapLimitInBytes:
      to->set_memory_swap_limit_in_bytes(from.memory_swap_limit_in_bytes());
      return;
    case OciProperty::kUnified:
      for (const auto& [key, value] : from.unified()) (*to->mutable_unified())[key] = value;
      return;
    case OciProperty::kHugepageLimits:
      for (const HugepageLimit& limit : from.hugepage_limits()) {
        // The first entry of that size is updated in place; any duplicates the kubelet sent
        // are dropped so no stale limit for the size survives next to ours.
        bool found = false;
        auto* entries = to->mutable_hugepage_limits();
        for (int i = 0; i < entries->size();) {
          if (entries->Get(i).page_size() != limit.page_size()) {
            ++i;
          } else if (!found) {
            entries->Mutable(i)->set_limit(limit.limit());
            found = true;
            ++i;
          } else {
            entries->erase(entries->begin() + i);
          }
        }
        if (!found) *to->add_hugepage_limits() = limit;
      }
      return;
  }
}

std::string OwnedFieldBytes(OciProperty p, const LinuxContainerResources& r) {
  LinuxContainerResources field;
  ApplyOwnedField(p, r, &field);
  std::sort(field.mutable_hugepage_limits()->begin(), field.mutable_hugepage_limits()->end(),
            [](const HugepageLimit& a, const HugepageLimit& b) {
              return std::pair(ParsePageSize(a.page_size()), a.page_size()) <
                     std::pair(ParsePageSize(b.page_size()), b.page_size());
            });
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);  // map entries in key order
    field.SerializeToCodedStream(&coded);
  }  // the coded stream flushes into `bytes` when destroyed
  return bytes;
}

}  // namespace qrm::apply
