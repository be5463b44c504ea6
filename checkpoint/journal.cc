#include "checkpoint/journal.h"

#include <cerrno>
#include <string_view>

#include <fcntl.h>
#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint/canonical_json.h"
#include "checkpoint/checksum.h"
#include "checkpoint/file_io.h"

namespace qrm::checkpoint {
namespace {

constexpr std::string_view kChecksumPrefix = "fnv1a64:";
constexpr size_t kChecksumLength = 8 + 16;  // "fnv1a64:" + 16 hex digits

// Verifies one line (without its newline); returns the record or what is wrong with it.
StatusOr<rapidjson::Document> ParseLine(std::string_view line) {
  if (line.size() < kChecksumLength + 1 || !line.starts_with(kChecksumPrefix) ||
      line[kChecksumLength] != ' ') {
    return DataLossError("not \"fnv1a64:<16 hex digits> <record>\"");
  }
  const std::string_view stored = line.substr(0, kChecksumLength);
  const std::string_view text = line.substr(kChecksumLength + 1);
  const std::string computed = FormatChecksum(text);
  if (stored != computed) {
    return DataLossError(
        fmt::format("checksum mismatch: stored {}, computed {}", stored, computed));
  }
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
  if (doc.HasParseError()) {
    return DataLossError(fmt::format("invalid JSON at byte {}: {}", doc.GetErrorOffset(),
                                     rapidjson::GetParseError_En(doc.GetParseError())));
  }
  if (!doc.IsObject()) return DataLossError("the record is not a JSON object");
  return doc;
}

Status CheckHeader(const rapidjson::Document& header, JournalContents& out) {
  const auto format = header.FindMember("journal");
  const auto generation = header.FindMember("generation");
  if (format == header.MemberEnd() || !format->value.IsUint() ||
      format->value.GetUint() != kJournalFormat) {
    return DataLossError(fmt::format("header: member \"journal\" is not {}", kJournalFormat));
  }
  if (generation == header.MemberEnd() || !generation->value.IsUint64()) {
    return DataLossError("header: member \"generation\" is not an unsigned integer");
  }
  out.generation = generation->value.GetUint64();
  return Status::Ok();
}

bool OnlyNul(std::string_view bytes) {
  return bytes.find_first_not_of('\0') == std::string_view::npos;
}

Status RunHook(const JournalOptions& options, JournalStep step) {
  return options.fault_hook ? options.fault_hook(step) : Status::Ok();
}

}  // namespace

StatusOr<std::string> FormatJournalLine(const rapidjson::Value& record) {
  if (!record.IsObject()) return InvalidArgumentError("journal record: not a JSON object");
  QRM_ASSIGN_OR_RETURN(std::string canonical, CanonicalJson(record));
  return FormatChecksum(canonical) + " " + canonical + "\n";
}

StatusOr<JournalContents> ParseJournal(std::string_view content, const std::string& name) {
  JournalContents out;
  size_t offset = 0;
  for (int line_number = 1; offset < content.size(); ++line_number) {
    const size_t newline = content.find('\n', offset);
    const bool complete = newline != std::string_view::npos;
    const std::string_view line =
        content.substr(offset, complete ? newline - offset : std::string_view::npos);
    const size_t next = complete ? newline + 1 : content.size();
    auto record = complete ? ParseLine(line) : StatusOr<rapidjson::Document>(DataLossError(""));
    if (!record.ok()) {
      if (line_number > 1 && (next == content.size() || OnlyNul(content.substr(next)))) {
        out.torn_tail = true;  // a crash cut the last append short
        break;
      }
      const std::string why = complete ? record.status().message() : "incomplete line";
      return DataLossError(fmt::format("journal {}: corrupt: line {}: {}", name, line_number, why));
    }
    if (line_number == 1) {
      if (Status s = CheckHeader(*record, out); !s.ok()) {
        return DataLossError(fmt::format("journal {}: corrupt: {}", name, s.message()));
      }
    } else {
      out.records.push_back(std::move(*record));
    }
    offset = next;
    out.valid_bytes = offset;
  }
  if (out.valid_bytes == 0)
    return DataLossError(fmt::format("journal {}: corrupt: no header", name));
  return out;
}

StatusOr<JournalContents> ReadJournal(const std::string& path) {
  QRM_ASSIGN_OR_RETURN(const std::string content, file_io::ReadWholeFile(path, "journal"));
  return ParseJournal(content, path);
}

JournalWriter::JournalWriter(std::string path, int fd, uint64_t generation, uint64_t records,
                             uint64_t bytes, JournalOptions options)
    : path_(std::move(path)),
      fd_(fd),
      generation_(generation),
      records_(records),
      bytes_(bytes),
      options_(std::move(options)) {}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Start(const std::string& path,
                                                              uint64_t generation,
                                                              const JournalOptions& options) {
  rapidjson::Document header(rapidjson::kObjectType);
  header.AddMember("journal", kJournalFormat, header.GetAllocator());
  header.AddMember("generation", generation, header.GetAllocator());
  QRM_ASSIGN_OR_RETURN(const std::string line, FormatJournalLine(header));

  WriteOptions replace;
  replace.file_mode = options.file_mode;
  QRM_ASSIGN_OR_RETURN(const int fd, file_io::ReplaceFile(path, line, replace, /*keep_open=*/true));
  return std::unique_ptr<JournalWriter>(
      new JournalWriter(path, fd, generation, 0, line.size(), options));
}

StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Continue(const std::string& path,
                                                                 const JournalContents& contents,
                                                                 const JournalOptions& options) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open", path);
  file_io::FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoError(errno, "stat", path);
  if (static_cast<uint64_t>(st.st_size) != contents.valid_bytes) {
    // A torn append: cut it off so the next record starts on a line of its own.
    if (::ftruncate(fd, static_cast<off_t>(contents.valid_bytes)) != 0) {
      return ErrnoError(errno, "truncate", path);
    }
    if (::fdatasync(fd) != 0) return ErrnoError(errno, "fdatasync", path);
  }
  return std::unique_ptr<JournalWriter>(
      new JournalWriter(path, closer.Release(), contents.generation, contents.records.size(),
                        contents.valid_bytes, options));
}

Status JournalWriter::Append(const rapidjson::Value& record) {
  return AppendRecord(record, options_.sync);
}

Status JournalWriter::AppendDurably(const rapidjson::Value& record) {
  return AppendRecord(record, true);
}

Status JournalWriter::AppendRecord(const rapidjson::Value& record, bool sync) {
  if (broken_) {
    return FailedPreconditionError(
        fmt::format("journal {}: an earlier append could not be undone; start a new one", path_));
  }
  auto line = FormatJournalLine(record);
  if (!line.ok()) return line.status().WithContext(fmt::format("journal {}", path_));
  // Appends to a file someone removed (a cleaned state directory) would succeed and be lost.
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || st.st_nlink == 0) {
    broken_ = true;
    return FailedPreconditionError(
        fmt::format("journal {}: the file was removed; start a new one", path_));
  }
  Status s = RunHook(options_, JournalStep::kAppend);
  if (s.ok()) s = file_io::WriteAll(fd_, *line, path_);
  if (s.ok() && sync) {
    s = RunHook(options_, JournalStep::kSync);
    if (s.ok() && ::fdatasync(fd_) != 0) s = ErrnoError(errno, "fdatasync", path_);
  }
  if (!s.ok()) {
    // The record may be partly or wholly on disk: take it back so a restart cannot apply a
    // change the owner reported as failed.
    if (::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0 || ::fdatasync(fd_) != 0) {
      broken_ = true;
    }
    return s;
  }
  bytes_ += line->size();
  ++records_;
  return Status::Ok();
}

Status JournalWriter::Sync() const {
  QRM_RETURN_IF_ERROR(RunHook(options_, JournalStep::kSync));
  if (::fdatasync(fd_) != 0) return ErrnoError(errno, "fdatasync", path_);
  return Status::Ok();
}

Status JournalWriter::TruncateTo(uint64_t bytes, uint64_t records) {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0 || ::fdatasync(fd_) != 0) {
    broken_ = true;
    return ErrnoError(errno, "truncate", path_);
  }
  bytes_ = bytes;
  records_ = records;
  return Status::Ok();
}

}  // namespace qrm::checkpoint
