#include "cri-shim/quantity.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace qrm::shim {
namespace {

constexpr std::pair<std::string_view, double> kSuffixes[] = {
    {"m", 1e-3},
    {"k", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15},
    {"E", 1e18},
    {"Ki", 1024.0},
    {"Mi", 1024.0 * 1024},
    {"Gi", 1024.0 * 1024 * 1024},
    {"Ti", 1024.0 * 1024 * 1024 * 1024},
    {"Pi", 1024.0 * 1024 * 1024 * 1024 * 1024},
    {"Ei", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024},
};

Status Malformed(std::string_view what, std::string_view value, std::string_view why) {
  return InvalidArgumentError(fmt::format(
      "{}=\"{}\": {} (expected a quantity such as 2, 1.5, 1500m, 512Mi)", what, value, why));
}

}  // namespace

StatusOr<double> ParseQuantity(std::string_view what, std::string_view value) {
  const std::string text(value);
  if (text.empty()) return Malformed(what, value, "empty");
  // strtod accepts what Kubernetes does (digits, fraction, exponent) and more (hex, inf,
  // nan, leading spaces), so the number part is checked by hand first.
  const char first = text.front();
  if (!(std::isdigit(static_cast<unsigned char>(first)) || first == '.' || first == '+')) {
    return Malformed(what, value, first == '-' ? "must not be negative" : "not a number");
  }
  for (char c : text) {
    if (c == 'x' || c == 'X' || c == ' ') return Malformed(what, value, "not a number");
  }
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return Malformed(what, value, "not a number");
  const std::string_view suffix(end);
  double scale = 1.0;
  if (!suffix.empty()) {
    bool known = false;
    for (const auto& [name, factor] : kSuffixes) {
      if (suffix == name) {
        scale = factor;
        known = true;
        break;
      }
    }
    if (!known) return Malformed(what, value, fmt::format("unknown suffix \"{}\"", suffix));
  }
  const double result = number * scale;
  if (!std::isfinite(result)) return Malformed(what, value, "out of range");
  return result;
}

}  // namespace qrm::shim
