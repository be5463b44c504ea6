#include "qrm/registry/registration_validation.h"

#include <cctype>
#include <climits>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/un.h>

namespace qrm::registry {
namespace {

bool IsAlnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

bool IsDnsLabel(std::string_view label) {
  if (label.empty() || label.size() > 63) return false;
  if (!IsAlnum(label.front()) || !IsAlnum(label.back())) return false;
  for (char c : label) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return true;
}

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  for (;;) {
    const size_t dot = s.find('.', start);
    if (!IsDnsLabel(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string RealPath(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                       &std::free);
  return resolved ? std::string(resolved.get()) : std::string();
}

}  // namespace

// Kubernetes' container resource name rules (pkg/apis/core/validation
// validateContainerResourceName with helper.IsStandardContainerResourceName,
// IsNativeResource and IsExtendedResourceName): a qualified name; without a prefix only the
// standard container resources; with a prefix outside kubernetes.io an extended resource,
// which must not start with "requests." and must stay a qualified name behind it.
Status ValidateResourceName(std::string_view name) {
  const size_t slash = name.find('/');
  auto refuse = [&](std::string_view why) {
    return InvalidArgumentError(
        fmt::format("resource_name \"{}\" is not a valid resource name: {}", name, why));
  };
  const bool qualified =
      slash == std::string_view::npos
          ? IsQualifiedNamePart(name)
          : IsDnsSubdomain(name.substr(0, slash)) && IsQualifiedNamePart(name.substr(slash + 1));
  if (!qualified) {
    return refuse(
        "expected [prefix/]name, prefix a DNS subdomain, name of 1-63 characters "
        "[A-Za-z0-9._-] starting and ending alphanumeric");
  }
  if (slash == std::string_view::npos) {
    if (name == "cpu" || name == "memory" || name == "ephemeral-storage" ||
        name.starts_with("hugepages-")) {
      return Status::Ok();
    }
    return refuse(
        "an extended resource needs a domain prefix (e.g. example.com/foo); only cpu, memory, "
        "ephemeral-storage and hugepages-<size> go without one");
  }
  if (name.find("kubernetes.io/") != std::string_view::npos) return Status::Ok();  // native
  if (name.starts_with("requests.")) {
    return refuse("an extended resource must not start with \"requests.\"");
  }
  // Kubernetes checks "requests." + name as a qualified name: the prefix gets 9 bytes less.
  if (slash + std::string_view("requests.").size() > 253) {
    return refuse("its prefix is longer than 244 characters");
  }
  return Status::Ok();
}

Status ValidateVersion(std::string_view version) {
  if (version != kSupportedVersion) {
    return InvalidArgumentError(
        fmt::format("version \"{}\" is not supported: this host speaks resourceplugin {}", version,
                    kSupportedVersion));
  }
  return Status::Ok();
}

StatusOr<std::string> ResolveEndpoint(const std::string& plugin_dir, std::string_view endpoint) {
  if (endpoint.empty() || endpoint == "." || endpoint == ".." ||
      endpoint.find('/') != std::string_view::npos ||
      endpoint.find('\0') != std::string_view::npos) {
    return InvalidArgumentError(fmt::format(
        "endpoint \"{}\" must be a plain socket file name inside the plugin directory {}", endpoint,
        plugin_dir));
  }
  std::string path = plugin_dir + "/" + std::string(endpoint);
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return InvalidArgumentError(
        fmt::format("endpoint \"{}\": socket path {} is longer than {} bytes", endpoint, path,
                    sizeof(sockaddr_un::sun_path) - 1));
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return FailedPreconditionError(
        fmt::format("endpoint \"{}\": {} does not exist", endpoint, path));
  }
  if (S_ISLNK(st.st_mode)) {
    const std::string dir = RealPath(plugin_dir);
    const std::string target = RealPath(path);
    if (dir.empty() || target.empty() || !target.starts_with(dir + "/") ||
        target.find('/', dir.size() + 1) != std::string::npos) {
      return InvalidArgumentError(
          fmt::format("endpoint \"{}\" is a symlink to {} outside the plugin directory {}",
                      endpoint, target.empty() ? "a missing file" : target, plugin_dir));
    }
    if (::stat(path.c_str(), &st) != 0) {
      return FailedPreconditionError(
          fmt::format("endpoint \"{}\": cannot stat {}", endpoint, target));
    }
  }
  if (!S_ISSOCK(st.st_mode)) {
    return InvalidArgumentError(
        fmt::format("endpoint \"{}\": {} is not a Unix socket", endpoint, path));
  }
  return path;
}

}  // namespace qrm::registry
