#include "common/log.h"

#include <mutex>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "common/mutex.h"

namespace qrm {
namespace {

constexpr const char* kTextPattern = "%Y-%m-%dT%H:%M:%S.%e %l [%n] %v";
// JSON lines for log shippers. %* is the message escaped as a JSON string body
// (spdlog's %v is raw, and messages carry pod names and plugin errors).
constexpr const char* kJsonPattern =
    R"({"time":"%Y-%m-%dT%H:%M:%S.%e","level":"%l","component":"%n","msg":"%*"})";

class JsonEscapedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (char c : msg.payload) {
      switch (c) {
        case '"': dest.append(std::string_view("\\\"")); break;
        case '\\': dest.append(std::string_view("\\\\")); break;
        case '\n': dest.append(std::string_view("\\n")); break;
        case '\r': dest.append(std::string_view("\\r")); break;
        case '\t': dest.append(std::string_view("\\t")); break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            fmt::format_to(std::back_inserter(dest), "\\u{:04x}", static_cast<int>(c));
          } else {
            dest.push_back(c);
          }
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonEscapedMessage>();
  }
};

Mutex g_mu;
std::string g_pattern QRM_GUARDED_BY(g_mu) = kTextPattern;
spdlog::level::level_enum g_level QRM_GUARDED_BY(g_mu) = spdlog::level::info;

void ApplyFormat(spdlog::logger& logger) QRM_REQUIRES(g_mu) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<JsonEscapedMessage>('*').set_pattern(g_pattern);
  logger.set_formatter(std::move(formatter));
  logger.set_level(g_level);
}

}  // namespace

std::shared_ptr<spdlog::logger> Logger(const std::string& component) {
  MutexLock lock(g_mu);
  if (auto existing = spdlog::get(component)) return existing;
  // Logs go to stderr: stdout belongs to programs' own output (qrmctl, benches).
  auto logger = spdlog::stderr_color_mt(component);
  ApplyFormat(*logger);
  return logger;
}

bool IsLogLevel(std::string_view level) {
  return level == "off" || spdlog::level::from_str(std::string(level)) != spdlog::level::off;
}

bool ConfigureLogging(std::string_view level, std::string_view format) {
  if (!IsLogLevel(level)) return false;
  const auto parsed = spdlog::level::from_str(std::string(level));
  if (format != "text" && format != "json") return false;
  MutexLock lock(g_mu);
  g_level = parsed;
  g_pattern = format == "json" ? kJsonPattern : kTextPattern;
  // apply_all calls back on this thread, with g_mu still held.
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& l)
                        QRM_REQUIRES(g_mu) { ApplyFormat(*l); });
  return true;
}

}  // namespace qrm
