#include "cluster/objects/meta_time.h"

#include <ctime>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::cluster {
namespace {

bool Digits(std::string_view text, size_t at, size_t n, int* out) {
  if (at + n > text.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  *out = v;
  return true;
}

Status BadTime(std::string_view text, std::string_view why) {
  return InvalidArgumentError(
      fmt::format("time {}: {} (want RFC 3339, e.g. 2026-01-02T03:04:05Z)", Quote(text), why));
}

// The offset after the seconds (and fraction) at `at`: "Z" or +hh:mm / -hh:mm, in seconds.
StatusOr<int64_t> ParseOffset(std::string_view text, size_t at) {
  if (at + 1 == text.size() && (text[at] == 'Z' || text[at] == 'z')) return int64_t{0};
  int hh = 0, mm = 0;
  if (at + 6 != text.size() || (text[at] != '+' && text[at] != '-') || text[at + 3] != ':' ||
      !Digits(text, at + 1, 2, &hh) || !Digits(text, at + 4, 2, &mm) || hh > 23 || mm > 59) {
    return BadTime(text, "no valid zone (Z or +hh:mm)");
  }
  const int64_t offset = hh * 3600 + mm * 60;
  return text[at] == '-' ? -offset : offset;
}

}  // namespace

std::string FormatTime(int64_t unix_seconds) {
  const time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

StatusOr<int64_t> ParseTime(std::string_view text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, 0, 4, &year) || text.size() < 20 || text[4] != '-' ||
      !Digits(text, 5, 2, &month) || text[7] != '-' || !Digits(text, 8, 2, &day) ||
      (text[10] != 'T' && text[10] != 't') || !Digits(text, 11, 2, &hour) || text[13] != ':' ||
      !Digits(text, 14, 2, &minute) || text[16] != ':' || !Digits(text, 17, 2, &second)) {
    return BadTime(text, "not a date and time");
  }
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1] ||
      (month == 2 && day == 29 && !leap) || hour > 23 || minute > 59 || second > 59) {
    return BadTime(text, "a field is out of range");
  }
  size_t at = 19;
  if (text[at] == '.') {  // a fraction: at least one digit, dropped
    size_t end = at + 1;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == at + 1) return BadTime(text, "a fraction without digits");
    at = end;
  }
  QRM_ASSIGN_OR_RETURN(const int64_t offset, ParseOffset(text, at));
  struct tm tm {};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

}  // namespace qrm::cluster
