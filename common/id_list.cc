#include "common/id_list.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm {
namespace {

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}

class Parser {
 public:
  Parser(std::string_view text, int max_id, std::string_view what)
      : text_(text), max_id_(max_id), what_(what) {}

  StatusOr<std::vector<IdRange>> Run() {
    std::vector<IdRange> ranges;
    if (text_.empty()) return ranges;
    std::size_t pos = 0;
    while (true) {
      const std::size_t comma = text_.find(',', pos);
      const std::size_t end = comma == std::string_view::npos ? text_.size() : comma;
      const std::string_view element = text_.substr(pos, end - pos);
      if (element.empty()) {
        return Error(fmt::format("empty element at offset {} (stray comma)", pos));
      }
      IdRange range;
      if (Status s = ParseElement(element, range); !s.ok()) return s;
      ranges.push_back(range);
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
    return Normalize(std::move(ranges));
  }

 private:
  Status ParseElement(std::string_view element, IdRange& range) const {
    const std::size_t dash = element.find('-');
    if (dash == std::string_view::npos) {
      if (!AllDigits(element)) {
        return Error(fmt::format("element {} is not a decimal id or range", Quote(element)));
      }
      QRM_RETURN_IF_ERROR(ParseId(element, range.first));
      range.last = range.first;
      return Status::Ok();
    }
    const std::string_view start = element.substr(0, dash);
    const std::string_view end = element.substr(dash + 1);
    if (start.empty()) {
      return Error(fmt::format("range {} has no start (ids are never negative)", Quote(element)));
    }
    if (end.empty()) return Error(fmt::format("range {} has no end", Quote(element)));
    if (!AllDigits(start) || !AllDigits(end)) {
      return Error(fmt::format("element {} is not a decimal id or range", Quote(element)));
    }
    QRM_RETURN_IF_ERROR(ParseId(start, range.first));
    QRM_RETURN_IF_ERROR(ParseId(end, range.last));
    if (range.first > range.last) {
      return Error(fmt::format("range {} starts above its end", Quote(element)));
    }
    return Status::Ok();
  }

  // `digits` is non-empty and all ASCII digits. Stops accumulating as soon as the value
  // passes max_id_, so no input length can overflow.
  Status ParseId(std::string_view digits, int& id) const {
    int64_t value = 0;
    for (char c : digits) {
      value = value * 10 + (c - '0');
      if (value > max_id_) {
        if (max_id_ < 0) {
          return Error(
              fmt::format("id {} is not allowed: the maximum is {}, so only the empty "
                          "list is valid",
                          digits, max_id_));
        }
        return Error(fmt::format("id {} exceeds the maximum {}", digits, max_id_));
      }
    }
    id = static_cast<int>(value);
    return Status::Ok();
  }

  static std::vector<IdRange> Normalize(std::vector<IdRange> ranges) {
    std::sort(ranges.begin(), ranges.end(),
              [](const IdRange& a, const IdRange& b) { return a.first < b.first; });
    std::vector<IdRange> merged;
    for (const IdRange& r : ranges) {
      // int64 so that last + 1 cannot overflow when last == INT_MAX.
      if (!merged.empty() && int64_t{r.first} <= int64_t{merged.back().last} + 1) {
        merged.back().last = std::max(merged.back().last, r.last);
      } else {
        merged.push_back(r);
      }
    }
    return merged;
  }

  Status Error(std::string_view reason) const {
    return InvalidArgumentError(fmt::format("{} {}: {}", what_, Quote(text_), reason));
  }

  std::string_view text_;
  int max_id_;
  std::string_view what_;
};

}  // namespace

StatusOr<std::vector<IdRange>> ParseIdList(std::string_view text, int max_id,
                                           std::string_view what) {
  return Parser(text, max_id, what).Run();
}

std::string FormatIdRanges(std::span<const IdRange> ranges) {
  std::string out;
  std::optional<IdRange> pending;
  auto flush = [&out](const IdRange& r) {
    if (!out.empty()) out += ',';
    if (r.first == r.last) {
      fmt::format_to(std::back_inserter(out), "{}", r.first);
    } else {
      fmt::format_to(std::back_inserter(out), "{}-{}", r.first, r.last);
    }
  };
  for (const IdRange& r : ranges) {
    if (pending && int64_t{r.first} == int64_t{pending->last} + 1) {
      pending->last = r.last;
      continue;
    }
    if (pending) flush(*pending);
    pending = r;
  }
  if (pending) flush(*pending);
  return out;
}

std::string FormatIdList(std::span<const int> ids) {
  std::vector<int> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<IdRange> ranges;
  for (int id : sorted) {
    assert(id >= 0 && "the list format has no negative ids");
    if (!ranges.empty() && ranges.back().last + 1 == id) {
      ranges.back().last = id;
    } else {
      ranges.push_back({id, id});
    }
  }
  return FormatIdRanges(ranges);
}

std::string_view TrimSysfsValue(std::string_view text) {
  while (!text.empty()) {
    const char c = text.back();
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') break;
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace qrm
