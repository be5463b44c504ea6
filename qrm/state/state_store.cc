#include "qrm/state/state_store.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint/canonical_json.h"
#include "checkpoint/file_io.h"
#include "common/log.h"
#include "common/metrics/metrics.h"
#include "qrm/state/state_codec.h"

namespace qrm::state {
namespace {

constexpr std::string_view kSuffix = ".json";

using checkpoint::file_io::SyncDirectory;

std::string Parent(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// mkdir -p for what it creates: the state directory itself 0700, directories above it 0711
// (search only), since they are often shared with sockets (/var/lib/qrm holds the
// pod-resources socket and the plugin directory) that a --socket-group must reach; a 0700
// parent made them unreachable for the group. Each new directory's entry is made durable
// (fsync of its parent), since the pod files written into it must survive a crash.
Status EnsureDirectory(const std::string& path, mode_t mode = 0700) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::Ok();
    return FailedPreconditionError(fmt::format("state store: {} is not a directory", path));
  }
  if (errno != ENOENT) return ErrnoError(errno, "stat", path);
  const std::string parent = Parent(path);
  if (parent != path) QRM_RETURN_IF_ERROR(EnsureDirectory(parent, 0711));
  if (::mkdir(path.c_str(), mode) != 0) {
    if (errno != EEXIST) return ErrnoError(errno, "create directory", path);
  } else if (::chmod(path.c_str(), mode) != 0) {  // the umask must not narrow it
    return ErrnoError(errno, "chmod", path);
  }
  return SyncDirectory(parent);
}

// The names in `dir`, sorted (so that Load's messages do not depend on readdir order).
StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoError(errno, "open directory", path);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) names.emplace_back(entry->d_name);
  const int error = errno;
  ::closedir(dir);
  if (error != 0) return ErrnoError(error, "read directory", path);
  std::sort(names.begin(), names.end());
  return names;
}

// One pod file of the pods directory: its pod, or nullopt when it is to be left out (gone
// since the listing, or corrupt or of another version and moved aside: `corrupt` says why).
// Errors stop the load: a file that cannot be moved aside, or one whose valid checksum covers
// content qrm never writes.
StatusOr<std::optional<PodAllocation>> LoadPodFile(const std::string& pods_dir,
                                                   const std::string& name,
                                                   std::vector<std::string>& corrupt) {
  const std::string path = pods_dir + "/" + name;
  const std::string uid = name.substr(0, name.size() - kSuffix.size());
  if (Status valid = StateStore::ValidatePodUid(uid); !valid.ok()) {
    return DataLossError(
        fmt::format("checkpoint {}: not named after a pod: {}; the file is "
                    "left in place (qrm never writes such a file)",
                    path, valid.message()));
  }
  checkpoint::ReadOptions options;
  options.min_version = StateStore::kVersion;
  options.max_version = StateStore::kVersion;
  options.quarantine_corrupt = true;
  StatusOr<checkpoint::Checkpoint> cp = checkpoint::Read(path, options);
  if (!cp.ok()) {
    const Status& s = cp.status();
    if (checkpoint::IsMissing(s)) return std::optional<PodAllocation>();  // removed since
    if (checkpoint::IsUnsupportedVersion(s)) {
      // Another qrm's file (older or newer): kept for it, but out of our way, so this
      // host starts and rebuilds the pod from the plugins and the runtime.
      StatusOr<std::string> aside = checkpoint::file_io::MoveAside(path, "unsupported-version");
      if (!aside.ok()) return s.WithContext(aside.status().message());
      corrupt.push_back(fmt::format("{}; moved aside to {}", s.message(), *aside));
      return std::optional<PodAllocation>();
    }
    if (!checkpoint::IsCorrupt(s)) return s;
    // Leaving the pod out is only safe if the evidence was moved aside; otherwise our
    // next write of the pod would replace it.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) return s;
    corrupt.push_back(s.message());
    return std::optional<PodAllocation>();
  }
  StatusOr<PodAllocation> pod = DecodePod(cp->data);
  if (!pod.ok()) {
    return DataLossError(fmt::format(
        "checkpoint {}: checksum is valid but the content is not: {}; the file is left in "
        "place (this is a qrm bug, not a disk fault)",
        path, pod.status().message()));
  }
  if (pod->uid != uid) {
    return DataLossError(fmt::format(
        "checkpoint {}: holds pod \"{}\", not \"{}\" as its name says; the file is left in "
        "place (qrm never writes such a file)",
        path, pod->uid, uid));
  }
  return std::optional<PodAllocation>(std::move(*pod));
}

// Runs task(0) .. task(n - 1) on up to `threads` threads (this one included): durable writes
// mostly wait for the disk, and the filesystem commits concurrent ones together.
template <typename Task>
void RunInParallel(size_t n, size_t threads, const Task& task) {
  threads = std::min(n, threads);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) task(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) task(i);
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(worker);
  worker();
  for (std::thread& h : helpers) h.join();
}

void CountCorrupt(const char* file, size_t n) {
  metrics::Default()
      .GetCounter("qrm_checkpoint_corrupt_total",
                  "Checkpoint files found corrupt or of an unsupported version at load, moved "
                  "aside and rebuilt.",
                  {{"file", file}})
      .Inc(static_cast<double>(n));
}

}  // namespace

StateStore::StateStore(std::string state_dir)
    : state_dir_(std::move(state_dir)), pods_dir_(state_dir_ + "/pods") {}

std::string StateStore::PodPath(const std::string& uid) const {
  return fmt::format("{}/{}{}", pods_dir_, uid, kSuffix);
}

std::string StateStore::JournalPath() const {
  return state_dir_ + "/pods.journal";
}

Status StateStore::ValidatePodUid(const std::string& uid) {
  std::string problem;
  if (uid.empty()) {
    problem = "is empty";
  } else if (uid.size() > kMaxUidLength) {
    problem = fmt::format("is longer than {} bytes", kMaxUidLength);
  } else if (uid.find('/') != std::string::npos) {
    problem = "contains '/'";
  } else if (uid.find('\0') != std::string::npos) {
    problem = "contains a NUL byte";
  } else if (uid[0] == '.') {
    problem = "starts with '.'";
  }
  if (problem.empty()) return Status::Ok();
  // The uid may hold anything: show it escaped-ish (NUL as \0), and cut it short.
  std::string shown;
  for (char c : uid.substr(0, 64)) shown += c == '\0' ? std::string("\\0") : std::string(1, c);
  if (uid.size() > 64) shown += "...";
  return InvalidArgumentError(
      fmt::format("pod uid \"{}\" {}: it is not usable as a checkpoint file name", shown, problem));
}

Status StateStore::Load() {
  MutexLock lock(mu_);
  loaded_ = false;
  recovered_ = false;
  recovery_message_.clear();
  pods_.clear();
  dirty_.clear();
  journal_.reset();

  // The state directory itself first, 0700: only the directories above it are 0711.
  QRM_RETURN_IF_ERROR(EnsureDirectory(state_dir_));
  QRM_RETURN_IF_ERROR(EnsureDirectory(pods_dir_));
  StatusOr<int> removed = checkpoint::RemoveStaleTempFilesIn(pods_dir_);
  if (!removed.ok()) {
    return removed.status().WithContext(
        fmt::format("state store {}: removing stale temp files", state_dir_));
  }
  StatusOr<std::vector<std::string>> names = ListDirectory(pods_dir_);
  if (!names.ok()) return names.status();

  PodResources pods;
  std::vector<std::string> corrupt;
  for (const std::string& name : *names) {
    // Temp files start with '.'; quarantined files end in .corrupt-<time>[.N].
    if (name.starts_with('.') || !name.ends_with(kSuffix)) continue;
    QRM_ASSIGN_OR_RETURN(std::optional<PodAllocation> pod, LoadPodFile(pods_dir_, name, corrupt));
    if (!pod) continue;
    for (auto& [container_name, container] : pod->containers) CacheResourceBytes(container);
    const std::string uid = pod->uid;
    pods.emplace(uid, std::make_shared<const PodAllocation>(std::move(*pod)));
  }
  if (!corrupt.empty()) CountCorrupt("host", corrupt.size());
  QRM_RETURN_IF_ERROR(LoadJournal(pods, corrupt));
  pods_ = std::move(pods);
  if (!corrupt.empty()) {
    recovered_ = true;
    recovery_message_ = fmt::format("{} corrupt pod file(s) or journal left out:", corrupt.size());
    for (const std::string& message : corrupt) recovery_message_ += " " + message + ";";
    recovery_message_.pop_back();
  }
  loaded_ = true;
  return Status::Ok();
}

Status StateStore::LoadJournal(PodResources& pods, std::vector<std::string>& corrupt) {
  const std::string path = JournalPath();
  StatusOr<checkpoint::JournalContents> read = checkpoint::ReadJournal(path);
  if (!read.ok() && !checkpoint::IsMissing(read.status())) {
    if (!checkpoint::IsCorrupt(read.status())) return read.status();
    // Damage (not a torn append, which the reader drops): the pods it held are rebuilt.
    QRM_ASSIGN_OR_RETURN(const std::string aside, checkpoint::file_io::MoveAside(path));
    corrupt.push_back(fmt::format("{}; moved aside to {}", read.status().message(), aside));
    CountCorrupt("host-journal", 1);
  }
  if (read.ok()) QRM_RETURN_IF_ERROR(ApplyJournal(*read, pods));
  next_generation_ = (read.ok() ? read->generation : 0) + 1;
  auto writer = read.ok() ? checkpoint::JournalWriter::Continue(path, *read, JournalOptions())
                          : checkpoint::JournalWriter::Start(path, 1, JournalOptions());
  if (writer.ok()) {
    journal_ = std::make_unique<checkpoint::SharedJournal>(std::move(*writer));
  } else {
    // A read-only or full state directory: the host starts (the CRI passes through) and every
    // mutation is refused until the journal can be written again (EnsureJournal).
    Logger("state")->error(
        "host checkpoint: cannot write {}: {}; admissions are refused until "
        "it can be written",
        path, writer.status().message());
  }
  // The pods the journal holds stay there (dirty) until the next compaction writes their
  // files: a restart writes nothing.
  return Status::Ok();
}

Status StateStore::ApplyJournal(const checkpoint::JournalContents& journal, PodResources& pods) {
  // Each record is a pod's whole value: only a pod's last record counts, so only that one is
  // decoded (a pod that grew container by container has a record per container).
  std::map<std::string, size_t> last;
  const auto bad = [&](size_t i, const Status& s) {
    return DataLossError(
        fmt::format("journal {}: record {}: {}; the journal is left in place (this is a qrm bug, "
                    "not a disk fault)",
                    JournalPath(), i + 1, s.message()));
  };
  for (size_t i = 0; i < journal.records.size(); ++i) {
    StatusOr<std::string> uid = PodRecordUid(journal.records[i]);
    if (uid.ok()) {
      if (Status valid = ValidatePodUid(*uid); !valid.ok()) uid = DataLossError(valid.message());
    }
    if (!uid.ok()) return bad(i, uid.status());
    last[*uid] = i;
  }
  for (const auto& [uid, i] : last) {
    // The next compaction writes every pod the journal holds to its file.
    dirty_.insert(uid);
    StatusOr<std::string> applied = ApplyPodRecord(journal.records[i], pods);
    if (!applied.ok()) return bad(i, applied.status());
  }
  return Status::Ok();
}

checkpoint::JournalOptions StateStore::JournalOptions() {
  checkpoint::JournalOptions options;
  options.sync = false;  // SharedJournal syncs, for every writer at once
  options.fault_hook = [this](checkpoint::JournalStep step) {
    checkpoint::JournalFaultHook hook;
    {
      MutexLock lock(hook_mu_);
      hook = journal_hook_;
    }
    return hook ? hook(step) : Status::Ok();
  };
  return options;
}

bool StateStore::recovered_from_corruption() const {
  MutexLock lock(mu_);
  return recovered_;
}

std::string StateStore::recovery_message() const {
  MutexLock lock(mu_);
  return recovery_message_;
}

PodResources StateStore::Snapshot() const {
  MutexLock lock(mu_);
  return pods_;
}

std::shared_ptr<const PodAllocation> StateStore::GetPod(const std::string& uid) const {
  MutexLock lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return nullptr;
  return it->second;
}

std::shared_ptr<const ContainerAllocation> StateStore::GetContainer(
    const std::string& uid, const std::string& container) const {
  std::shared_ptr<const PodAllocation> pod = GetPod(uid);
  if (pod == nullptr) return nullptr;
  auto it = pod->containers.find(container);
  if (it == pod->containers.end()) return nullptr;
  // Shares the pod's ownership: no copy, and the container lives as long as the result.
  return std::shared_ptr<const ContainerAllocation>(pod, &it->second);
}

Status StateStore::CheckLoadedLocked() const {
  if (loaded_) return Status::Ok();
  return FailedPreconditionError(fmt::format(
      "state store {}: not loaded; mutations are refused so that a checkpoint that was not "
      "read cannot be overwritten",
      state_dir_));
}

Status StateStore::SyncPodFile(const std::string& uid, const PodAllocation* pod,
                               const checkpoint::FaultHook& hook) const {
  const std::string path = PodPath(uid);
  if (pod == nullptr) {
    if (hook) QRM_RETURN_IF_ERROR(hook(checkpoint::WriteStep::kRename));
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoError(errno, "remove", path);
    return Status::Ok();  // Compact syncs the directory once for all
  }
  rapidjson::Document data;
  QRM_RETURN_IF_ERROR(EncodePod(*pod, data));
  checkpoint::WriteOptions options;
  options.fault_hook = hook;
  return checkpoint::Write(path, kVersion, data, options);
}

Status StateStore::AppendRecord(const rapidjson::Document& record) {
  metrics::Stopwatch watch;
  Status s = journal_->Append(record);
  metrics::Default()
      .GetHistogram("qrm_checkpoint_write_duration_seconds",
                    "Durable writes of the host checkpoint (one journal record per mutation).")
      .Observe(watch.Seconds());
  if (!s.ok()) {
    metrics::Default()
        .GetCounter("qrm_checkpoint_write_failures_total",
                    "Host checkpoint writes that failed (the mutation was refused).")
        .Inc();
  }
  return s;
}

bool StateStore::CompactionDue() const {
  return journal_->records() >= std::max<uint64_t>(kCompactAfter, pods_.size()) ||
         journal_->bytes() >= kCompactAfterBytes;
}

Status StateStore::EnsureJournal() {
  {
    std::shared_lock<std::shared_mutex> no_compaction(compaction_);
    if (journal_ != nullptr && !journal_->broken()) return Status::Ok();
  }
  // None could be opened at Load, or one could not take back a failed record: what it held
  // goes into the pod files, and a new journal starts.
  return Compact();
}

template <typename Edit>
Status StateStore::UpdatePod(const std::string& uid, Edit&& edit) {
  QRM_RETURN_IF_ERROR(ValidatePodUid(uid));
  QRM_RETURN_IF_ERROR(EnsureJournal());
  bool compact = false;
  {
    // Step 1: the compaction lock, the pod's writer lock, then its current value.
    std::shared_lock<std::shared_mutex> no_compaction(compaction_);
    auto writer = writers_.Lock(uid);
    std::shared_ptr<const PodAllocation> current;
    {
      MutexLock lock(mu_);
      QRM_RETURN_IF_ERROR(CheckLoadedLocked());
      if (auto it = pods_.find(uid); it != pods_.end()) current = it->second;
    }
    const PodEdit next = edit(current);
    if (!next) return Status::Ok();

    // Step 2: durable, with no global lock held. The pod's file waits for the compaction: a
    // file written here too would cost every admission a file creation and a rename (about
    // 0.3 ms on ext4) for a copy that only a compaction makes durable.
    QRM_ASSIGN_OR_RETURN(const rapidjson::Document record, EncodePodRecord(uid, next->get()));
    QRM_RETURN_IF_ERROR(AppendRecord(record));

    // Step 3: publish.
    MutexLock lock(mu_);
    if (*next) {
      pods_[uid] = *next;
    } else {
      pods_.erase(uid);
    }
    dirty_.insert(uid);
    compact = CompactionDue();
  }
  if (compact) {
    // The mutation is durable already; a failed compaction is retried by the next one.
    if (Status s = Compact(); !s.ok()) {
      Logger("state")->warn("compaction of {} failed: {}", JournalPath(), s.message());
    }
  }
  return Status::Ok();
}

Status StateStore::Compact() {
  std::unique_lock<std::shared_mutex> exclusive(compaction_);
  std::vector<std::pair<std::string, std::shared_ptr<const PodAllocation>>> dirty;
  checkpoint::FaultHook hook;
  {
    MutexLock lock(mu_);
    QRM_RETURN_IF_ERROR(CheckLoadedLocked());
    if (journal_ != nullptr && dirty_.empty() && journal_->records() == 0 && !journal_->broken()) {
      return Status::Ok();
    }
    for (const std::string& uid : dirty_) {
      const auto pod = pods_.find(uid);
      dirty.emplace_back(uid, pod == pods_.end() ? nullptr : pod->second);
    }
    hook = fault_hook_;
  }
  std::vector<Status> results(dirty.size());
  RunInParallel(dirty.size(), kMaxParallelWrites, [&](size_t i) {
    results[i] = SyncPodFile(dirty[i].first, dirty[i].second.get(), hook);
  });
  for (const Status& s : results) QRM_RETURN_IF_ERROR(s);
  QRM_RETURN_IF_ERROR(SyncDirectory(pods_dir_));  // the removals
  // Every change the journal holds is in a durable file now: a crash before the new journal
  // replaces the old one replays records whose results the files already hold.
  const uint64_t generation = journal_ ? journal_->generation() + 1 : next_generation_;
  QRM_ASSIGN_OR_RETURN(
      auto next, checkpoint::JournalWriter::Start(JournalPath(), generation, JournalOptions()));
  if (journal_) {
    journal_->Replace(std::move(next));
  } else {
    journal_ = std::make_unique<checkpoint::SharedJournal>(std::move(next));
  }
  MutexLock lock(mu_);
  dirty_.clear();
  return Status::Ok();
}

namespace {

// A copy of `current` to modify, or a new pod; name and namespace set.
std::shared_ptr<PodAllocation> Modifiable(const std::shared_ptr<const PodAllocation>& current,
                                          const std::string& uid, const std::string& pod_name,
                                          const std::string& ns) {
  auto pod =
      current ? std::make_shared<PodAllocation>(*current) : std::make_shared<PodAllocation>();
  pod->uid = uid;
  pod->name = pod_name;
  pod->ns = ns;
  return pod;
}

}  // namespace

Status StateStore::PutContainer(const std::string& uid, const std::string& pod_name,
                                const std::string& ns, const std::string& container,
                                ContainerAllocation allocation) {
  if (container.empty()) {
    return InvalidArgumentError(
        fmt::format("PutContainer {}: container name must not be empty", uid));
  }
  for (const auto& entry : allocation.resources) {
    if (entry.first.empty()) {
      return InvalidArgumentError(
          fmt::format("PutContainer {} container {}: empty resource name", uid, container));
    }
  }
  allocation.request.clear_resource_name();
  CacheResourceBytes(allocation);
  return UpdatePod(uid, [&](const std::shared_ptr<const PodAllocation>& current) -> PodEdit {
    auto pod = Modifiable(current, uid, pod_name, ns);
    pod->containers[container] = std::move(allocation);
    return pod;
  });
}

Status StateStore::SetPodAffinity(const std::string& uid, const std::string& pod_name,
                                  const std::string& ns, NumaMask affinity) {
  if (affinity.empty()) {
    return InvalidArgumentError(fmt::format("SetPodAffinity {}: empty NUMA affinity", uid));
  }
  return UpdatePod(uid, [&](const std::shared_ptr<const PodAllocation>& current) -> PodEdit {
    auto pod = Modifiable(current, uid, pod_name, ns);
    pod->pod_affinity = affinity;
    return pod;
  });
}

Status StateStore::RemoveContainer(const std::string& uid, const std::string& container) {
  return UpdatePod(uid, [&](const std::shared_ptr<const PodAllocation>& current) -> PodEdit {
    if (!current || !current->containers.contains(container)) return std::nullopt;
    auto pod = std::make_shared<PodAllocation>(*current);
    pod->containers.erase(container);
    return pod;
  });
}

Status StateStore::RemovePod(const std::string& uid) {
  return UpdatePod(uid, [&](const std::shared_ptr<const PodAllocation>& current) -> PodEdit {
    if (!current) return std::nullopt;
    return std::shared_ptr<const PodAllocation>();
  });
}

Status StateStore::ApplyChanges(const std::vector<ResourceChange>& changes,
                                std::set<std::string>* failed_uids) {
  for (const ResourceChange& c : changes) {
    if (c.resource.empty()) {
      return InvalidArgumentError(
          fmt::format("ApplyChanges {} container {}: empty resource name", c.uid, c.container));
    }
  }
  // By pod, then (container, resource), so that a later change to a key replaces an earlier
  // one and each pod is written once.
  std::map<std::string, std::map<std::pair<std::string, std::string>, const ResourceChange*>>
      by_pod;
  for (const ResourceChange& c : changes) by_pod[c.uid][{c.container, c.resource}] = &c;

  // One task per pod; each is an ordinary UpdatePod (the pod's writer lock, its file
  // written durably, then published).
  using PodChanges = std::map<std::pair<std::string, std::string>, const ResourceChange*>;
  std::vector<std::pair<const std::string*, const PodChanges*>> pods;
  pods.reserve(by_pod.size());
  for (const auto& [uid, pod_changes] : by_pod) pods.emplace_back(&uid, &pod_changes);
  std::vector<Status> results(pods.size());
  auto update = [&](size_t i) {
    const PodChanges& pod_changes = *pods[i].second;
    results[i] = UpdatePod(*pods[i].first,
                           [&](const std::shared_ptr<const PodAllocation>& current) -> PodEdit {
                             if (!current) return std::nullopt;  // the pod vanished
                             std::shared_ptr<PodAllocation> pod;
                             for (const auto& [key, change] : pod_changes) {
                               const auto& [container, resource] = key;
                               auto found = current->containers.find(container);
                               if (found == current->containers.end())
                                 continue;  // the container vanished
                               if (SameAsStored(found->second, resource, change->info)) continue;
                               if (!pod) pod = std::make_shared<PodAllocation>(*current);
                               ContainerAllocation& target = pod->containers.at(container);
                               target.resources[resource] = change->info;
                               target.resource_bytes[resource] = DeterministicBytes(change->info);
                             }
                             if (!pod) return std::nullopt;  // nothing to change
                             return pod;
                           });
  };
  // The records are independent: written from up to kMaxParallelWrites threads, they share
  // their fdatasyncs (checkpoint/shared_journal.h).
  RunInParallel(pods.size(), kMaxParallelWrites, update);

  Status first_error;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (results[i].ok()) continue;
    if (failed_uids != nullptr) failed_uids->insert(*pods[i].first);
    if (first_error.ok()) first_error = results[i];
  }
  return first_error;
}

void StateStore::SetFaultHookForTesting(checkpoint::FaultHook hook) {
  MutexLock lock(mu_);
  fault_hook_ = std::move(hook);
}

void StateStore::SetJournalFaultHookForTesting(checkpoint::JournalFaultHook journal_hook) {
  MutexLock lock(hook_mu_);
  journal_hook_ = std::move(journal_hook);
}

}  // namespace qrm::state
