// Fuzzes the journal reader (checkpoint/journal.h, ParseJournal) and the bundled plugins' ledger
// entry codecs behind it (CPU: plugins/cpu/cpu_ledger.h ContainerCodec; memory and NIC:
// MemoryEntry and NicEntry in plugins/{memory,nic}/*_ledger.h).
//
// A mutated line almost never keeps a valid checksum, so besides the raw bytes the target seals
// the input: each line that is a JSON object becomes a record with the right checksum after a
// valid header, which lets the fuzzer reach record and entry decoding. Properties beyond "does
// not crash":
//  * ParseJournal fails only with kDataLoss, and what it accepts ends within the input;
//  * a sealed journal is always accepted, with every record in order (no false corruption);
//  * cutting a sealed journal anywhere after its header loses at most the cut record (a torn
//    append is never reported as corruption);
//  * an entry a codec decodes, encoded and decoded again, is the same value (for the memory and
//    NIC entries: encodes to the same text); a refused entry is kDataLoss.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "checkpoint/journal.h"
#include "plugins/cpu/cpu_ledger.h"
#include "plugins/memory/memory_ledger.h"
#include "plugins/nic/nic_ledger.h"
#include "plugins/sdk/entry_fields.h"

namespace {

namespace ckpt = qrm::checkpoint;

[[noreturn]] void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "journal_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}

std::string Header() {
  rapidjson::Document h(rapidjson::kObjectType);
  h.AddMember("journal", ckpt::kJournalFormat, h.GetAllocator());
  h.AddMember("generation", 5, h.GetAllocator());
  return *ckpt::FormatJournalLine(h);
}

void CheckEntryCodec(const rapidjson::Value& record) {
  auto decoded = qrm::cpu::ContainerCodec::Decode(qrm::sdk::EntryReader(record));
  if (!decoded.ok()) {
    if (decoded.status().code() != qrm::StatusCode::kDataLoss) {
      Fail("entry decode error code", decoded.status().ToString());
    }
    return;
  }
  qrm::sdk::EntryWriter w;
  qrm::cpu::ContainerCodec::Encode(*decoded, w);
  auto again = qrm::cpu::ContainerCodec::Decode(qrm::sdk::EntryReader(w.object()));
  if (!again.ok()) Fail("re-encoded entry refused", again.status().ToString());
  if (!(*again == *decoded)) Fail("entry round trip changed the value");
}

// An entry type with Encode/Decode members: decoded, encoded and decoded again, it encodes to
// the same text.
template <typename Entry>
void CheckMemberCodec(const rapidjson::Value& record, const char* name) {
  auto decoded = Entry::Decode(qrm::sdk::EntryReader(record));
  if (!decoded.ok()) {
    if (decoded.status().code() != qrm::StatusCode::kDataLoss) {
      Fail(name, decoded.status().ToString());
    }
    return;
  }
  qrm::sdk::EntryWriter first;
  decoded->Encode(first);
  auto again = Entry::Decode(qrm::sdk::EntryReader(first.object()));
  if (!again.ok()) Fail(name, "re-encoded entry refused: " + again.status().ToString());
  qrm::sdk::EntryWriter second;
  again->Encode(second);
  if (first.Text().value() != second.Text().value()) Fail(name, "entry round trip changed it");
}

// Every line of `input` that is a JSON object with a canonical form, sealed after a header.
std::string Seal(std::string_view input, std::vector<std::string>* lines) {
  std::string journal = Header();
  size_t offset = 0;
  while (offset < input.size()) {
    const size_t end = std::min(input.find('\n', offset), input.size());
    const std::string_view text = input.substr(offset, end - offset);
    offset = end + 1;
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
    if (doc.HasParseError() || !doc.IsObject()) continue;
    auto line = ckpt::FormatJournalLine(doc);
    if (!line.ok()) continue;  // floats and such have no canonical form
    journal += *line;
    lines->push_back(*line);
  }
  return journal;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto raw = ckpt::ParseJournal(input, "fuzz");
  if (!raw.ok() && raw.status().code() != qrm::StatusCode::kDataLoss) {
    Fail("raw parse error code", raw.status().ToString());
  }
  if (raw.ok() && raw->valid_bytes > size) Fail("valid_bytes beyond the input");

  std::vector<std::string> lines;
  const std::string sealed = Seal(input, &lines);
  auto parsed = ckpt::ParseJournal(sealed, "sealed");
  if (!parsed.ok()) Fail("sealed journal refused", parsed.status().ToString());
  if (parsed->records.size() != lines.size() || parsed->torn_tail || parsed->generation != 5) {
    Fail("sealed journal read back differently");
  }
  for (const auto& record : parsed->records) {
    CheckEntryCodec(record);
    CheckMemberCodec<qrm::memory::MemoryEntry>(record, "memory entry");
    CheckMemberCodec<qrm::nic::NicEntry>(record, "nic entry");
  }

  // A crash may cut the last append anywhere: only that record may be lost.
  const size_t cut =
      Header().size() + (size == 0 ? 0 : data[0] % (sealed.size() - Header().size() + 1));
  auto torn = ckpt::ParseJournal(std::string_view(sealed).substr(0, cut), "torn");
  if (!torn.ok()) Fail("torn journal refused", torn.status().ToString());
  size_t whole = 0, at = Header().size();
  while (whole < lines.size() && at + lines[whole].size() <= cut) at += lines[whole++].size();
  if (torn->records.size() != whole) Fail("torn journal lost more than the cut record");
  return 0;
}
