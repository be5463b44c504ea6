#include "plugins/sdk/pod_ledger.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>
#include <unistd.h>

#include "checkpoint/canonical_json.h"
#include "common/log.h"

namespace qrm::sdk {
namespace {

using rapidjson::Value;

std::string JournalPath(const LedgerOptions& options) {
  return options.path + ".journal";
}

Value Text(const std::string& s, rapidjson::Document::AllocatorType& a) {
  return Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a);
}

std::string Str(const Value& v) {
  return std::string(v.GetString(), v.GetStringLength());
}

// "pods": {uid: {container: {entry}}}, "settings": {key: "value"}.
Status ParseContents(const Value& data, EncodedLedger& out) {
  const auto pods = data.FindMember("pods");
  const auto settings = data.FindMember("settings");
  if (pods == data.MemberEnd() || !pods->value.IsObject()) {
    return DataLossError("member \"pods\" is missing or not an object");
  }
  if (settings == data.MemberEnd() || !settings->value.IsObject()) {
    return DataLossError("member \"settings\" is missing or not an object");
  }
  for (const auto& pod : pods->value.GetObject()) {
    if (!pod.value.IsObject()) {
      return DataLossError(fmt::format("pod {} is not an object", Str(pod.name)));
    }
    auto& containers = out.pods[Str(pod.name)];
    for (const auto& c : pod.value.GetObject()) {
      if (!c.value.IsObject()) {
        return DataLossError(
            fmt::format("pod {} container {}: not an object", Str(pod.name), Str(c.name)));
      }
      QRM_ASSIGN_OR_RETURN(containers[Str(c.name)], checkpoint::CanonicalJson(c.value));
    }
  }
  for (const auto& s : settings->value.GetObject()) {
    if (!s.value.IsString()) {
      return DataLossError(fmt::format("setting \"{}\" is not a string", Str(s.name)));
    }
    out.settings[Str(s.name)] = Str(s.value);
  }
  return Status::Ok();
}

// One journal record applied to `ledger`; kDataLoss for a record that is not one of ours.
Status ApplyRecord(const Value& record, EncodedLedger& ledger) {
  const auto member = [&](const char* key) -> const Value* {
    const auto it = record.FindMember(key);
    return it == record.MemberEnd() ? nullptr : &it->value;
  };
  const Value* op = member("op");
  const Value* pod = member("pod");
  if (op == nullptr || !op->IsString()) return DataLossError("member \"op\" is not a string");
  const std::string kind = Str(*op);
  if (kind == "put") {
    const Value* container = member("container");
    const Value* entry = member("entry");
    if (pod == nullptr || !pod->IsString() || container == nullptr || !container->IsString() ||
        entry == nullptr || !entry->IsObject()) {
      return DataLossError("a put needs string \"pod\" and \"container\" and object \"entry\"");
    }
    QRM_ASSIGN_OR_RETURN(ledger.pods[Str(*pod)][Str(*container)],
                         checkpoint::CanonicalJson(*entry));
  } else if (kind == "remove_pod") {
    if (pod == nullptr || !pod->IsString()) return DataLossError("member \"pod\" is not a string");
    ledger.pods.erase(Str(*pod));
  } else if (kind == "set") {
    const Value* key = member("key");
    const Value* value = member("value");
    if (key == nullptr || !key->IsString() || value == nullptr || !value->IsString()) {
      return DataLossError("a set needs string \"key\" and \"value\"");
    }
    ledger.settings[Str(*key)] = Str(*value);
  } else {
    return DataLossError(fmt::format("unknown op \"{}\"", kind));
  }
  return Status::Ok();
}

// The changes the journal of snapshot generation `generation` holds. A missing journal (the
// crash came before it was started) or an older one (its changes are in the snapshot) adds
// nothing.
Status ApplyJournal(const std::string& path, uint64_t generation, EncodedLedger& ledger) {
  auto journal = checkpoint::ReadJournal(path);
  if (!journal.ok())
    return checkpoint::IsMissing(journal.status()) ? Status::Ok() : journal.status();
  if (journal->generation < generation) return Status::Ok();
  if (journal->generation > generation) {
    return DataLossError(fmt::format("journal {}: generation {} is newer than its snapshot's {}",
                                     path, journal->generation, generation));
  }
  for (size_t i = 0; i < journal->records.size(); ++i) {
    if (Status s = ApplyRecord(journal->records[i], ledger); !s.ok()) {
      return DataLossError(fmt::format("journal {}: record {}: {}", path, i + 1, s.message()));
    }
  }
  return Status::Ok();
}

size_t CountContainers(const EncodedLedger& ledger) {
  size_t n = 0;
  for (const auto& [uid, containers] : ledger.pods) n += containers.size();
  return n;
}

// Sets a journal aside when its snapshot was (corrupt, reset) or is missing (an orphan).
Status SetJournalAside(const LedgerOptions& options, const checkpoint::StateFileLoad& load) {
  const std::string path = JournalPath(options);
  if (::access(path.c_str(), F_OK) != 0) return Status::Ok();
  const std::string reason = load.corrupt              ? "corrupt"
                             : !load.set_aside.empty() ? "reset"
                                                       : "orphan";
  QRM_ASSIGN_OR_RETURN(const std::string aside, checkpoint::SetStateFileAside(path, reason));
  Logger(options.component)->warn("journal {} set aside as {} ({})", path, aside, reason);
  return Status::Ok();
}

// The snapshot's generation and contents.
Status ParseSnapshot(const Value& data, uint64_t& generation, EncodedLedger& ledger) {
  const auto g = data.FindMember("generation");
  if (g == data.MemberEnd() || !g->value.IsUint64()) {
    return DataLossError("member \"generation\" is not an unsigned integer");
  }
  generation = g->value.GetUint64();
  return ParseContents(data, ledger);
}

}  // namespace

StatusOr<EncodedLedger> ReadLedger(const std::string& path) {
  checkpoint::ReadOptions read;
  read.max_version = UINT32_MAX;
  read.quarantine_corrupt = false;
  QRM_ASSIGN_OR_RETURN(const checkpoint::Checkpoint snapshot, checkpoint::Read(path, read));
  EncodedLedger ledger;
  uint64_t generation = 0;
  if (Status s = ParseSnapshot(snapshot.data, generation, ledger); !s.ok()) {
    return s.WithContext("ledger " + path);
  }
  QRM_RETURN_IF_ERROR(ApplyJournal(path + ".journal", generation, ledger));
  return ledger;
}

StatusOr<std::unique_ptr<LedgerStore>> LedgerStore::Open(const LedgerOptions& options,
                                                         const AcceptFn& accept,
                                                         const UpgradeFn& upgrade,
                                                         checkpoint::StateFileLoad* load) {
  std::unique_ptr<LedgerStore> store(new LedgerStore(options));
  const std::string journal_path = JournalPath(options);
  checkpoint::StateFileOptions file;
  file.component = options.component;
  file.version = options.version;
  file.oldest_version = options.oldest_version;
  file.reset_state = options.reset_state;
  auto restore = [&](const Value& data, uint32_t version) -> Status {
    EncodedLedger ledger;
    uint64_t generation = 0;
    if (version < options.version) {
      if (!upgrade) return DataLossError(fmt::format("version {} cannot be upgraded", version));
      QRM_ASSIGN_OR_RETURN(ledger, upgrade(data, version));
    } else {
      QRM_RETURN_IF_ERROR(ParseSnapshot(data, generation, ledger));
      QRM_RETURN_IF_ERROR(ApplyJournal(journal_path, generation, ledger));
    }
    QRM_RETURN_IF_ERROR(accept(ledger));
    store->ledger_ = std::move(ledger);
    store->generation_ = generation;
    return Status::Ok();
  };
  QRM_ASSIGN_OR_RETURN(*load, checkpoint::LoadVersionedStateFile(options.path, file, restore));
  QRM_RETURN_IF_ERROR(checkpoint::RemoveStaleTempFiles(journal_path).status());
  if (!load->restored) QRM_RETURN_IF_ERROR(SetJournalAside(options, *load));
  store->containers_ = CountContainers(store->ledger_);
  // A fresh snapshot and journal: torn tails, stale journals and upgrades end here.
  QRM_RETURN_IF_ERROR(store->WriteSnapshot());
  return store;
}

Status LedgerStore::Put(const std::string& pod_uid, const std::string& container,
                        const Value& entry) {
  if (!entry.IsObject()) return InvalidArgumentError("ledger entry: not a JSON object");
  QRM_ASSIGN_OR_RETURN(std::string text, checkpoint::CanonicalJson(entry));
  rapidjson::Document record(rapidjson::kObjectType);
  auto& a = record.GetAllocator();
  record.AddMember("op", "put", a);
  record.AddMember("pod", Text(pod_uid, a), a);
  record.AddMember("container", Text(container, a), a);
  record.AddMember("entry", Value(entry, a), a);
  return Record(record, [&] {
    auto& held = ledger_.pods[pod_uid];
    if (held.insert_or_assign(container, std::move(text)).second) ++containers_;
  });
}

Status LedgerStore::RemovePod(const std::string& pod_uid) {
  const auto it = ledger_.pods.find(pod_uid);
  if (it == ledger_.pods.end()) return Status::Ok();
  rapidjson::Document record(rapidjson::kObjectType);
  auto& a = record.GetAllocator();
  record.AddMember("op", "remove_pod", a);
  record.AddMember("pod", Text(pod_uid, a), a);
  return Record(record, [&] {
    containers_ -= it->second.size();
    ledger_.pods.erase(it);
  });
}

Status LedgerStore::Set(const std::string& key, const std::string& value) {
  const auto it = ledger_.settings.find(key);
  if (it != ledger_.settings.end() && it->second == value) return Status::Ok();
  rapidjson::Document record(rapidjson::kObjectType);
  auto& a = record.GetAllocator();
  record.AddMember("op", "set", a);
  record.AddMember("key", Text(key, a), a);
  record.AddMember("value", Text(value, a), a);
  // Settings change rarely and are no container's record: the host cannot replay them, so
  // they are durable before Set returns whatever the journal's sync option.
  return Record(
      record, [&] { ledger_.settings[key] = value; }, true);
}

Status LedgerStore::Record(const Value& record, const std::function<void()>& apply, bool durable) {
  // A journal that failed to start, or that could not take back a failed append, is replaced
  // first: the snapshot of what is held now makes whatever it contains stale.
  Status written = !journal_ || journal_->broken() ? WriteSnapshot() : Status::Ok();
  if (written.ok()) written = durable ? journal_->AppendDurably(record) : journal_->Append(record);
  if (!written.ok()) {
    // The plugin's own record of why; the host logs the refused call. A full or read-only
    // disk is the operator's to fix.
    Logger(options_.component)
        ->error("cannot write the state file {}: {} (the change is undone)", options_.path,
                written.ToString());
    return written;
  }
  apply();
  if (journal_->records() >= std::max<uint64_t>(options_.compact_after, containers_)) {
    // The change is durable already; a failed compaction is retried with the next change.
    if (Status s = WriteSnapshot(); !s.ok()) {
      Logger(options_.component)
          ->warn("ledger {}: compaction failed: {}", options_.path, s.message());
    }
  }
  return Status::Ok();
}

Status LedgerStore::WriteSnapshot() {
  const uint64_t next = generation_ + 1;
  rapidjson::Document data(rapidjson::kObjectType);
  auto& a = data.GetAllocator();
  Value pods(rapidjson::kObjectType);
  for (const auto& [uid, containers] : ledger_.pods) {
    Value held(rapidjson::kObjectType);
    for (const auto& [name, text] : containers) {
      rapidjson::Document entry(&a);  // parsed into the snapshot's allocator, then moved
      entry.Parse(text.data(), text.size());
      held.AddMember(Text(name, a), static_cast<Value&>(entry).Move(), a);
    }
    pods.AddMember(Text(uid, a), held, a);
  }
  Value settings(rapidjson::kObjectType);
  for (const auto& [key, value] : ledger_.settings)
    settings.AddMember(Text(key, a), Text(value, a), a);
  if (options_.snapshot_view) options_.snapshot_view(data, a);
  data.RemoveMember("generation");
  data.RemoveMember("pods");
  data.RemoveMember("settings");
  data.AddMember("generation", next, a);
  data.AddMember("pods", pods, a);
  data.AddMember("settings", settings, a);
  QRM_RETURN_IF_ERROR(
      checkpoint::Write(options_.path, options_.version, data, options_.snapshot_write));
  generation_ = next;
  journal_.reset();  // stale now, whatever happens next
  QRM_ASSIGN_OR_RETURN(journal_, checkpoint::JournalWriter::Start(JournalPath(options_), next,
                                                                  options_.journal_write));
  return Status::Ok();
}

}  // namespace qrm::sdk
