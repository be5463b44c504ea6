#include "advisor/trace/line_reader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace qrm::advisor::trace_internal {

namespace {
// The first buffer: a small file never needs more.
constexpr std::size_t kFirstBuffer = 4 * 1024;
// The most asked of the stream at a time: big reads keep the per-line cost at a memchr.
constexpr std::size_t kReadChunk = 64 * 1024;
}  // namespace

LineReader::LineReader(std::istream& in, std::string name, std::size_t max_line)
    : in_(in),
      name_(std::move(name)),
      max_line_(max_line),
      // Room for the longest line with its "\r\n" and a full chunk behind it.
      max_size_(max_line + 2 + kReadChunk) {}

StatusOr<std::optional<std::string_view>> LineReader::Next() {
  while (true) {
    const char* start = buffer_.get() + begin_;
    const std::size_t unread = end_ - begin_;
    // No memchr on an empty range: the buffer may not exist yet.
    const void* newline =
        unread > scanned_ ? std::memchr(start + scanned_, '\n', unread - scanned_) : nullptr;
    std::string_view line;
    if (newline != nullptr) {
      line = std::string_view(start, static_cast<const char*>(newline) - start);
      begin_ += line.size() + 1;
    } else if (eof_) {
      if (unread == 0) return std::optional<std::string_view>();
      line = std::string_view(start, unread);  // the last line has no line ending
      begin_ = end_;
    } else {
      scanned_ = unread;
      // A line of max_line bytes may still be followed by "\r" before its "\n".
      if (unread > max_line_ + 1) {
        return InvalidArgumentError(fmt::format(
            "{}:{}: line longer than {} bytes (is this a usage trace, with line endings?)", name_,
            line_number_ + 1, max_line_));
      }
      QRM_ASSIGN_OR_RETURN(const bool more, Refill());
      eof_ = !more;
      continue;
    }
    scanned_ = 0;
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max_line_) {
      return InvalidArgumentError(
          fmt::format("{}:{}: line longer than {} bytes", name_, line_number_, max_line_));
    }
    return std::optional<std::string_view>(line);
  }
}

StatusOr<bool> LineReader::Refill() {
  const std::size_t unread = end_ - begin_;
  // Next() refuses a line before it outgrows max_size_: a full buffer can always grow.
  if ((unread == size_ || read_filled_) && size_ < max_size_) {
    const std::size_t size = std::min(max_size_, std::max(2 * size_, kFirstBuffer));
    std::unique_ptr<char[]> bigger(new char[size]);  // not zeroed: only read bytes are used
    if (unread > 0) std::memcpy(bigger.get(), buffer_.get() + begin_, unread);
    buffer_ = std::move(bigger);
    size_ = size;
  } else if (begin_ > 0 && unread > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, unread);
  }
  begin_ = 0;
  end_ = unread;
  const std::size_t want = size_ - end_;
  in_.read(buffer_.get() + end_, static_cast<std::streamsize>(want));
  if (in_.bad()) {
    return DataLossError(fmt::format("{}: read failed after line {}", name_, line_number_));
  }
  const auto got = static_cast<std::size_t>(in_.gcount());
  read_filled_ = got == want;
  end_ += got;
  return got > 0;
}

}  // namespace qrm::advisor::trace_internal
