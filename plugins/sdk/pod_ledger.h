// PodLedger: which container of which pod holds what, kept durably. Every plugin needs it
// (the host asks a restarted plugin what it holds, and must get what it was told before), so
// the SDK keeps it; the plugin keeps only its policy.
//
//   struct Slots {                                     // the plugin's entry type
//     int64_t count = 0; std::string nodes;
//     void Encode(sdk::EntryWriter& w) const { w.Set("count", count); w.Set("nodes", nodes); }
//     static StatusOr<Slots> Decode(const sdk::EntryReader& r) {
//       QRM_ASSIGN_OR_RETURN(int64_t count, r.Int("count"));
//       QRM_ASSIGN_OR_RETURN(std::string nodes, r.String("nodes"));
//       return Slots{count, nodes};
//     }
//   };
//   QRM_ASSIGN_OR_RETURN(auto opened, sdk::PodLedger<Slots>::Open(options));
//   ... opened.contents.pods: what the plugin held before it stopped ...
//   QRM_RETURN_IF_ERROR(opened.ledger->Put(uid, container, slots));   // before answering
//
// Durability. Put, RemovePod and Set each append one checksummed record to a journal
// (<path>.journal, checkpoint/journal.h) with one write, whatever the number of containers
// held. Set returns once its record is on disk (one fdatasync); Put and RemovePod do too with
// journal_write.sync (the default of JournalOptions, for a host that does not replay), and
// without it return once the record is in the file: that survives a crash of the plugin, and
// what a machine crash takes from the journal's end, qrm-host gives back (it replays every
// admitted allocation a registering plugin lacks and releases what it holds for pods that are
// gone). The plugins' --state-sync flag chooses (plugin_flags.h). When the journal holds more
// records than the ledger has containers (and at least compact_after), the ledger writes a
// snapshot (<path>, a checkpoint file) and starts a new journal: the cost per change stays
// constant and the files stay proportional to what is held. What survives what is stated in
// docs/checkpoint-format.md ("Plugin ledgers").
//
// Loading follows the state file policy of checkpoint/state_file.h: a corrupt snapshot or
// journal is moved aside (both files) and the plugin starts empty (the host replays what
// running containers hold); a ledger the `check` callback refuses as another machine's
// (kFailedPrecondition) stops the plugin unless reset_state.
//
// Not thread-safe: the plugin serializes its calls (it holds its own lock around its state).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <rapidjson/document.h>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/journal.h"
#include "checkpoint/state_file.h"
#include "common/status.h"
#include "plugins/sdk/entry_fields.h"

namespace qrm::sdk {

// Plugin-wide values beside the entries (a pool size, the machine the state was built on).
using LedgerSettings = std::map<std::string, std::string>;

struct LedgerOptions {
  std::string path;       // the snapshot; the journal is path + ".journal"
  std::string component;  // log lines and the corrupt-file metric, e.g. "cpu-plugin"
  uint32_t version = 1;   // the schema version of the plugin's entries and settings
  // Older snapshot versions the plugin can still read through `upgrade` (0: none).
  uint32_t oldest_version = 0;
  bool reset_state = false;
  // Compact no sooner than after this many journal records.
  uint64_t compact_after = 256;
  checkpoint::WriteOptions snapshot_write;
  checkpoint::JournalOptions journal_write;
  // Adds members to each snapshot for operators (a per-NUMA view of the pools, say): never
  // read back, and current as of the snapshot, not of the journal after it. Member names
  // "generation", "pods" and "settings" are the ledger's.
  std::function<void(rapidjson::Value& data, rapidjson::Document::AllocatorType& a)> snapshot_view;
};

// The ledger's contents as stored: each entry is the canonical JSON text of its object.
struct EncodedLedger {
  std::map<std::string, std::map<std::string, std::string>> pods;  // pod uid -> container
  LedgerSettings settings;
};

// The non-template part: files, journal, compaction. Plugins use PodLedger<Entry>.
class LedgerStore {
 public:
  // Decodes and checks what was read (kDataLoss: corrupt; kFailedPrecondition: another
  // machine's); may keep what it decoded, since it runs once, on success or not.
  using AcceptFn = std::function<Status(const EncodedLedger&)>;
  // Converts a snapshot of an older version (`data`, `version`) into a ledger.
  using UpgradeFn = std::function<StatusOr<EncodedLedger>(const rapidjson::Value&, uint32_t)>;

  static StatusOr<std::unique_ptr<LedgerStore>> Open(const LedgerOptions& options,
                                                     const AcceptFn& accept,
                                                     const UpgradeFn& upgrade,
                                                     checkpoint::StateFileLoad* load);

  Status Put(const std::string& pod_uid, const std::string& container,
             const rapidjson::Value& entry);
  Status RemovePod(const std::string& pod_uid);
  Status Set(const std::string& key, const std::string& value);
  // Writes a snapshot now and starts a new journal (compaction does this on its own; a plugin
  // calls it at a clean stop, so that the snapshot's view is current).
  Status WriteSnapshot();

  const EncodedLedger& contents() const { return ledger_; }
  uint64_t generation() const { return generation_; }
  uint64_t journal_records() const { return journal_ ? journal_->records() : 0; }
  size_t containers() const { return containers_; }

 private:
  explicit LedgerStore(LedgerOptions options) : options_(std::move(options)) {}
  // Applies one change in memory once its record is durable; compacts when due.
  // Appends `record` (durably whatever the journal's sync option says when `durable`), then
  // applies the change in memory with `apply`.
  Status Record(const rapidjson::Value& record, const std::function<void()>& apply,
                bool durable = false);

  LedgerOptions options_;
  EncodedLedger ledger_;
  size_t containers_ = 0;
  uint64_t generation_ = 0;
  std::unique_ptr<checkpoint::JournalWriter> journal_;
};

// What a ledger's files hold now (snapshot plus journal), read without changing anything:
// for tools and tests. Errors as the files' readers report them (kNotFound, kDataLoss...).
StatusOr<EncodedLedger> ReadLedger(const std::string& path);

// How an entry is written and read: by default the entry's own Encode and Decode members.
template <typename Entry>
struct MemberCodec {
  static void Encode(const Entry& entry, EntryWriter& w) { entry.Encode(w); }
  static StatusOr<Entry> Decode(const EntryReader& r) { return Entry::Decode(r); }
};

template <typename Entry, typename Codec = MemberCodec<Entry>>
class PodLedger {
 public:
  struct Contents {
    std::map<std::string, std::map<std::string, Entry>> pods;  // pod uid -> container -> entry
    LedgerSettings settings;
  };
  struct Opened {
    std::unique_ptr<PodLedger> ledger;
    Contents contents;               // what the files held (empty on a fresh start)
    checkpoint::StateFileLoad load;  // restored, corrupt, set aside...
  };
  // Refuses a ledger written for something else (kFailedPrecondition names the way out).
  using CheckFn = std::function<Status(const Contents&)>;
  // Reads a snapshot of an older version (oldest_version to version - 1): what it held.
  using UpgradeFn =
      std::function<StatusOr<Contents>(const rapidjson::Value& data, uint32_t version)>;

  // With an empty options.path the ledger keeps nothing on disk and every change succeeds
  // (unit tests of a plugin's policy).
  static StatusOr<Opened> Open(const LedgerOptions& options, const CheckFn& check = {},
                               const UpgradeFn& upgrade = {}) {
    Opened opened;
    if (options.path.empty()) {
      opened.ledger.reset(new PodLedger(nullptr));
      return opened;
    }
    LedgerStore::UpgradeFn encoded_upgrade;
    if (upgrade) {
      encoded_upgrade = [&](const rapidjson::Value& data,
                            uint32_t version) -> StatusOr<EncodedLedger> {
        QRM_ASSIGN_OR_RETURN(const Contents contents, upgrade(data, version));
        return Encode(contents);
      };
    }
    auto accept = [&](const EncodedLedger& encoded) -> Status {
      Contents decoded;
      QRM_RETURN_IF_ERROR(Decode(encoded, decoded));
      if (check) QRM_RETURN_IF_ERROR(check(decoded));
      opened.contents = std::move(decoded);
      return Status::Ok();
    };
    QRM_ASSIGN_OR_RETURN(auto store,
                         LedgerStore::Open(options, accept, encoded_upgrade, &opened.load));
    opened.ledger.reset(new PodLedger(std::move(store)));
    return opened;
  }

  // A failed change is logged (naming the file) and changes nothing in the ledger: the plugin
  // undoes it in memory and fails the call.
  Status Put(const std::string& pod_uid, const std::string& container, const Entry& entry) {
    if (!store_) return Status::Ok();
    EntryWriter writer;
    Codec::Encode(entry, writer);
    return store_->Put(pod_uid, container, writer.object());
  }
  Status RemovePod(const std::string& pod_uid) {
    return store_ ? store_->RemovePod(pod_uid) : Status::Ok();
  }
  Status Set(const std::string& key, const std::string& value) {
    return store_ ? store_->Set(key, value) : Status::Ok();
  }
  Status WriteSnapshot() { return store_ ? store_->WriteSnapshot() : Status::Ok(); }

  // The files' bookkeeping (generation, journal records, containers held): for tests and
  // diagnostics of a ledger with a path.
  const LedgerStore& store() const { return *store_; }

 private:
  explicit PodLedger(std::unique_ptr<LedgerStore> store) : store_(std::move(store)) {}

  static StatusOr<EncodedLedger> Encode(const Contents& contents) {
    EncodedLedger encoded;
    for (const auto& [uid, containers] : contents.pods) {
      for (const auto& [name, entry] : containers) {
        EntryWriter writer;
        Codec::Encode(entry, writer);
        QRM_ASSIGN_OR_RETURN(encoded.pods[uid][name], writer.Text());
      }
    }
    encoded.settings = contents.settings;
    return encoded;
  }

  static Status Decode(const EncodedLedger& encoded, Contents& out) {
    for (const auto& [uid, containers] : encoded.pods) {
      for (const auto& [name, text] : containers) {
        rapidjson::Document doc;
        doc.Parse(text.data(), text.size());
        auto entry = Codec::Decode(EntryReader(doc));
        if (!entry.ok()) {
          std::string message = "pod ";
          message.append(uid).append(" container ").append(name).append(": ");
          return Status(entry.status().code(), message.append(entry.status().message()));
        }
        out.pods[uid].emplace(name, std::move(*entry));
      }
    }
    out.settings = encoded.settings;
    return Status::Ok();
  }

  std::unique_ptr<LedgerStore> store_;  // null: nothing on disk
};

}  // namespace qrm::sdk
