// Logging: one spdlog logger per component, so every line says who wrote it.
//
// Lines look like
//   2026-11-20T23:28:42.123 info [registry] resource=cpu endpoint=cpu.sock: registered
// Pod and container identity go into the message through PodRef, e.g.
//   log->info("{}: admitted", PodRef{uid, ns, name, container});
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/logger.h>

namespace qrm {

// Returns the process-wide logger for `component`, creating it on first use.
std::shared_ptr<spdlog::logger> Logger(const std::string& component);

// Sets the level ("trace".."off") and format ("text" or "json") of every logger.
// Fails (returns false) on an unknown level or format.
bool ConfigureLogging(std::string_view level, std::string_view format = "text");

// Whether ConfigureLogging takes `level` (for checking a configuration without applying it).
bool IsLogLevel(std::string_view level);

// Pod/container identity in one consistent form: "pod=ns/name(uid) container=c".
struct PodRef {
  std::string_view uid;
  std::string_view ns;
  std::string_view name;
  std::string_view container;
};

}  // namespace qrm

template <>
struct fmt::formatter<qrm::PodRef> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const qrm::PodRef& p, Ctx& ctx) const {
    if (p.container.empty()) return fmt::format_to(ctx.out(), "pod={}/{}({})", p.ns, p.name, p.uid);
    return fmt::format_to(ctx.out(), "pod={}/{}({}) container={}", p.ns, p.name, p.uid,
                          p.container);
  }
};
