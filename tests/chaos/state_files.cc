#include "tests/chaos/state_files.h"

#include <sstream>

#include <catch2/catch.hpp>
#include <dirent.h>
#include <sys/stat.h>

#include "testing/temp_dir.h"

namespace qrm::chaos {

const char* DamageName(Damage d) {
  switch (d) {
    case Damage::kTruncated: return "truncated";
    case Damage::kBitFlipped: return "bit-flipped";
    case Damage::kEmpty: return "empty";
    case Damage::kWrongVersion: return "wrong version";
  }
  return "?";
}

// A ledger's journal (checkpoint/journal.h): the damage lands in its header line, which no
// reader takes for a torn append.
void DamageJournal(std::string& content, Damage d) {
  const size_t header_end = content.find('\n');
  REQUIRE(header_end != std::string::npos);
  switch (d) {
    case Damage::kTruncated: content.resize(header_end / 2); break;
    case Damage::kBitFlipped: content[header_end / 2] ^= 0x04; break;
    case Damage::kEmpty: content.clear(); break;
    case Damage::kWrongVersion: {
      const size_t v = content.find("\"journal\":1");
      REQUIRE(v != std::string::npos);
      content.replace(v, 11, "\"journal\":7");
      break;
    }
  }
}

void DamageFile(const std::string& path, Damage d) {
  std::string content = testing::ReadFile(path);
  REQUIRE(content.size() > 16);
  if (path.ends_with(".journal")) {
    DamageJournal(content, d);
    testing::WriteFile(path, content);
    return;
  }
  switch (d) {
    case Damage::kTruncated: content.resize(content.size() / 2); break;
    case Damage::kBitFlipped: {
      // Inside "data", past the envelope, so only the checksum can tell.
      const size_t data = content.find("\"data\"");
      REQUIRE(data != std::string::npos);
      const size_t at = data + (content.size() - data) / 2;
      content[at] = static_cast<char>(content[at] ^ 0x04);
      break;
    }
    case Damage::kEmpty: content.clear(); break;
    case Damage::kWrongVersion: {
      const size_t v = content.find("\"version\":");
      REQUIRE(v != std::string::npos);
      content.replace(v, 11, "\"version\":7");  // versions are single digits here
      break;
    }
  }
  testing::WriteFile(path, content);
}

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      struct stat st;
      if (name.starts_with('.') || ::stat((dir + "/" + name).c_str(), &st) != 0 ||
          !S_ISREG(st.st_mode)) {
        continue;
      }
      out.push_back(name);
    }
    ::closedir(d);
  }
  return out;
}

std::vector<std::string> MovedAside(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& name : FilesIn(dir)) {
    if (name.find(".corrupt-") != std::string::npos ||
        name.find(".unsupported-version-") != std::string::npos) {
      out.push_back(name);
    }
  }
  return out;
}

int CountLines(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

}  // namespace qrm::chaos
