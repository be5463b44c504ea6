#include "common/config/config.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/config/po_error_text.h"
#include "common/errno_text.h"
#include "common/log.h"
#include "common/quote.h"

namespace qrm::config {
namespace po = boost::program_options;
namespace {

constexpr const char* kConfigOption = "config";
constexpr const char* kPrintOption = "print-config";
constexpr const char* kHelpOption = "help";
constexpr const char* kCheckOption = "check-config";

// Options that steer the binary rather than configure it: never a config file key, never
// printed as part of the effective configuration.
bool IsControlOption(const std::string& name) {
  return name == kConfigOption || name == kPrintOption || name == kHelpOption ||
         name == kCheckOption;
}

std::string Compact(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

std::string KeyOf(const std::string& option) {
  std::string key = option;
  for (char& c : key) c = c == '-' ? '_' : c;
  return key;
}

std::string OptionOf(const std::string& key) {
  std::string option = key;
  for (char& c : option) c = c == '_' ? '-' : c;
  return option;
}

// The text a scalar JSON value stands for on the command line.
StatusOr<std::string> ScalarText(const std::string& file, const std::string& key,
                                 const rapidjson::Value& v) {
  if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
  if (v.IsBool()) return std::string(v.GetBool() ? "true" : "false");
  if (v.IsNumber()) return Compact(v);
  return InvalidArgumentError(
      fmt::format("config {}: key \"{}\": invalid value {} (expected a "
                  "string, number or boolean)",
                  file, key, Compact(v)));
}

StatusOr<po::parsed_options> ParseFile(const std::string& path,
                                       const po::options_description& desc) {
  std::ifstream in(path);
  if (!in) {
    return InvalidArgumentError(
        fmt::format("--config {}: cannot open: {}", Quote(path), ErrnoText(errno)));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(fmt::format("config {}: invalid JSON at offset {}: {}", path,
                                            doc.GetErrorOffset(),
                                            rapidjson::GetParseError_En(doc.GetParseError())));
  }
  if (!doc.IsObject()) {
    return InvalidArgumentError(fmt::format("config {}: expected a JSON object", path));
  }
  po::parsed_options parsed(&desc);
  for (const auto& m : doc.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    const std::string option = OptionOf(key);
    // find_nothrow still throws when a key matches several options (the empty key matches
    // them all); a config file must never end a binary with an uncaught exception.
    const po::option_description* d = nullptr;
    try {
      d = desc.find_nothrow(option, false);
    } catch (const po::error&) {
      d = nullptr;
    }
    if (d == nullptr || IsControlOption(option)) {
      return InvalidArgumentError(
          fmt::format("config {}: unknown key \"{}\" (see --help for the keys)", path, key));
    }
    const rapidjson::Value& v = m.value;
    const unsigned max_tokens = d->semantic()->max_tokens();
    po::option opt;
    opt.string_key = d->long_name();
    if (max_tokens == 0) {  // a switch: true sets it, false leaves it unset
      if (!v.IsBool()) {
        return InvalidArgumentError(
            fmt::format("config {}: key \"{}\": invalid value {} (expected true or false)", path,
                        key, Compact(v)));
      }
      if (!v.GetBool()) continue;
    } else if (v.IsArray() && max_tokens > 1) {
      for (const auto& item : v.GetArray()) {
        QRM_ASSIGN_OR_RETURN(auto s, ScalarText(path, key, item));
        opt.value.push_back(s);
      }
    } else if (v.IsObject() || v.IsArray()) {
      opt.value.push_back(Compact(v));
    } else {
      QRM_ASSIGN_OR_RETURN(auto s, ScalarText(path, key, v));
      opt.value.push_back(s);
    }
    opt.original_tokens = {"config:" + key};
    parsed.options.push_back(std::move(opt));
  }
  return parsed;
}

// Program_options errors name the option as "--reconcile-period"; say it the way the user
// may have written it, with the value.
Status FromPoError(const po::error& e, const std::string& source) {
  const std::string msg = PoErrorText(e);
  return InvalidArgumentError(source.empty() ? msg : fmt::format("{}: {}", source, msg));
}

void WriteValue(rapidjson::Writer<rapidjson::StringBuffer>& w, const po::variable_value& value) {
  const boost::any& a = value.value();
  if (const auto* s = boost::any_cast<std::string>(&a)) {
    w.String(s->c_str(), static_cast<rapidjson::SizeType>(s->size()));
  } else if (const auto* b = boost::any_cast<bool>(&a)) {
    w.Bool(*b);
  } else if (const auto* i = boost::any_cast<int>(&a)) {
    w.Int(*i);
  } else if (const auto* u = boost::any_cast<unsigned>(&a)) {
    w.Uint(*u);
  } else if (const auto* l = boost::any_cast<int64_t>(&a)) {
    w.Int64(*l);
  } else if (const auto* ul = boost::any_cast<uint64_t>(&a)) {
    w.Uint64(*ul);
  } else if (const auto* d = boost::any_cast<double>(&a)) {
    w.Double(*d);
  } else if (const auto* v = boost::any_cast<std::vector<std::string>>(&a)) {
    w.StartArray();
    for (const std::string& item : *v) {
      w.String(item.c_str(), static_cast<rapidjson::SizeType>(item.size()));
    }
    w.EndArray();
  } else {
    w.Null();  // a type this printer does not know; never silently dropped
  }
}

}  // namespace

StatusOr<Parsed> Parse(int argc, const char* const* argv, po::options_description& desc) {
  desc.add_options()(kHelpOption, "print this help and exit")(
      kConfigOption, po::value<std::string>()->value_name("FILE"),
      "JSON config file; keys are the option names (with '_' or '-'); flags override it")(
      kPrintOption, "print the effective configuration as JSON and exit")(
      kCheckOption,
      "validate the configuration against this machine (--sysfs-root, --procfs-root) and exit: "
      "0 valid, 2 invalid; reads and writes no state");
  Parsed out;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), out.vm);
  } catch (const po::error& e) {
    return FromPoError(e, "");
  }
  if (out.vm.count(kHelpOption)) {
    std::ostringstream help;
    help << desc;
    out.output = help.str();
    out.exit = true;
    return out;
  }
  std::string source;
  if (out.vm.count(kConfigOption)) {
    source = "config " + out.vm[kConfigOption].as<std::string>();
    auto file = ParseFile(out.vm[kConfigOption].as<std::string>(), desc);
    if (!file.ok()) return file.status();
    try {
      po::store(*file, out.vm);  // values already set by flags are kept
    } catch (const po::error& e) {
      return FromPoError(e, source);
    }
  }
  try {
    po::notify(out.vm);
  } catch (const po::error& e) {
    return FromPoError(e, source);
  }
  if (out.vm.count(kPrintOption)) {
    out.output = EffectiveConfigJson(out.vm, desc) + "\n";
    out.exit = true;
  }
  out.check_only = out.vm.count(kCheckOption) > 0;
  return out;
}

std::string CheckConfigOk(std::string_view program, std::string_view machine_summary) {
  return fmt::format("{}: configuration valid for this machine ({})\n", program, machine_summary);
}

std::string EffectiveConfigJson(const po::variables_map& vm, const po::options_description& desc) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  for (const auto& d : desc.options()) {
    const std::string& name = d->long_name();
    if (IsControlOption(name)) continue;
    auto it = vm.find(name);
    if (it == vm.end()) continue;
    const std::string key = KeyOf(name);
    w.Key(key.c_str());
    if (it->second.value().empty()) {
      w.Bool(true);  // a switch that was given
    } else {
      WriteValue(w, it->second);
    }
  }
  w.EndObject();
  return buf.GetString();
}

StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text, std::string_view key) {
  auto bad = [&] {
    return InvalidArgumentError(
        fmt::format("{}: invalid duration {} (expected a number and a unit: 250ms, 3s, 1m, 1h)",
                    key, Quote(text)));
  };
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data() || !std::isfinite(number) || number < 0) {
    return bad();
  }
  const std::string_view unit(end, text.data() + text.size() - end);
  double ms = 0;
  if (unit == "ms") {
    ms = number;
  } else if (unit == "s") {
    ms = number * 1000;
  } else if (unit == "m") {
    ms = number * 60'000;
  } else if (unit == "h") {
    ms = number * 3'600'000;
  } else {
    return bad();
  }
  if (ms > 1e12) return bad();
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(ms)));
}

StatusOr<uint64_t> ParseBytes(std::string_view text, std::string_view key) {
  auto bad = [&] {
    return InvalidArgumentError(
        fmt::format("{}: invalid size {} (expected bytes or a number with Ki, Mi, Gi, Ti, K, M, "
                    "G, T: 500Mi)",
                    key, Quote(text)));
  };
  uint64_t number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data()) return bad();
  const std::string_view unit(end, text.data() + text.size() - end);
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"", 1},
      {"Ki", 1ULL << 10},
      {"Mi", 1ULL << 20},
      {"Gi", 1ULL << 30},
      {"Ti", 1ULL << 40},
      {"K", 1000ULL},
      {"M", 1000ULL * 1000},
      {"G", 1000ULL * 1000 * 1000},
      {"T", 1000ULL * 1000 * 1000 * 1000},
  };
  for (const auto& [name, factor] : kUnits) {
    if (unit != name) continue;
    if (number > UINT64_MAX / factor) return bad();
    return number * factor;
  }
  return bad();
}

Status CheckLogFlags(std::string_view level, std::string_view format) {
  if (!IsLogLevel(level)) {
    return InvalidArgumentError(fmt::format(
        "log-level {}: expected trace, debug, info, warn, error, critical or off", Quote(level)));
  }
  if (format != "text" && format != "json") {
    return InvalidArgumentError(fmt::format("log-format {}: expected text or json", Quote(format)));
  }
  return Status::Ok();
}

}  // namespace qrm::config
