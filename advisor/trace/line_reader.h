// Bounded line reading for the trace readers: lines come out of a fixed-size buffer, so
// memory stays the same whatever the size of the file, and a line longer than the cap is an
// error instead of a reason to grow without limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::advisor::trace_internal {

class LineReader {
 public:
  // `name` names the file in messages; `max_line` is the longest line accepted, in bytes
  // without its line ending.
  LineReader(std::istream& in, std::string name, std::size_t max_line);

  // The next line without its "\n" or "\r\n" (the last line may have no line ending), or
  // nothing at the end of the stream. The view is valid until the next call.
  // Errors: kInvalidArgument for a line over the cap, kDataLoss when the stream fails.
  StatusOr<std::optional<std::string_view>> Next();

  // The number of the line Next() returned last (1-based).
  uint64_t line_number() const { return line_number_; }

 private:
  // Moves the unread bytes to the front of the buffer (a bigger one when it is full or the
  // stream keeps filling it) and reads more behind them; false at the end of the stream.
  StatusOr<bool> Refill();

  std::istream& in_;
  std::string name_;
  std::size_t max_line_;
  // Grows from a few KiB (a small file costs little) to max_size_ while reads fill it.
  std::unique_ptr<char[]> buffer_;
  std::size_t size_ = 0;
  std::size_t max_size_;
  std::size_t begin_ = 0;     // first unread byte
  std::size_t end_ = 0;       // one past the last byte read
  std::size_t scanned_ = 0;   // bytes from begin_ known to hold no '\n'
  bool read_filled_ = false;  // the last read filled the buffer: the stream has more
  bool eof_ = false;
  uint64_t line_number_ = 0;
};

}  // namespace qrm::advisor::trace_internal
