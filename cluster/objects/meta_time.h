// metav1.Time and metav1.Duration as they appear in Kubernetes JSON.
//
// A Time is RFC 3339 in UTC with whole seconds ("2026-11-27T00:00:00Z"), what
// metav1.Time.MarshalJSON writes; reading accepts any RFC 3339 form Go's time.RFC3339 layout
// parses (fractional seconds, a numeric offset). A Duration is Go's time.Duration text
// ("5m0s", "1h30m0s", "1.5s"), what metav1.Duration.MarshalJSON writes, and reading takes
// what time.ParseDuration takes ("300s", "1h", "1.5h", "-2m3.4s").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::cluster {

// Unix seconds as RFC 3339 UTC ("1970-01-01T00:00:00Z"); years 0000-9999.
std::string FormatTime(int64_t unix_seconds);
// RFC 3339 to Unix seconds (a fraction is dropped, as metav1.Time's second precision does).
// Errors quote the text.
StatusOr<int64_t> ParseTime(std::string_view text);

// Nanoseconds as Go's Duration.String() writes them.
std::string FormatDuration(int64_t nanoseconds);
// Go's time.ParseDuration: a signed sequence of decimal numbers with units ns, us (or µs),
// ms, s, m, h; "0" alone. Overflow and a missing unit are errors quoting the text.
StatusOr<int64_t> ParseDuration(std::string_view text);

inline constexpr int64_t kNanosPerSecond = 1'000'000'000;

}  // namespace qrm::cluster
