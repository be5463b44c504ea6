#include "cluster/kube/kube_config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <initializer_list>
#include <set>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "cluster/kube/http_client.h"
#include "cluster/kube/kube_yaml.h"
#include "common/quote.h"

namespace qrm::kube {
namespace {

using Kind = DocNode::Kind;

constexpr std::string_view kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
constexpr size_t kMaxFileBytes = 4u << 20;  // a CA bundle is a few hundred KiB

// A key as written in a field path: as it is when it is a plain word, quoted otherwise.
std::string KeyText(std::string_view key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
  return plain ? std::string(key) : Quote(key);
}

std::string Join(std::string_view path, std::string_view key) {
  return path.empty() ? KeyText(key) : fmt::format("{}.{}", path, KeyText(key));
}

// Credentials are never copied into a message (messages reach logs).
std::string Shown(std::string_view key, std::string_view value) {
  if (key == "token" || key == "client-key-data") return "<redacted>";
  return Quote(value);
}

std::string Trimmed(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return std::string(s);
}

int Sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with padding, line breaks ignored (what kubectl writes and Go reads).
std::optional<std::string> DecodeBase64(std::string_view in) {
  std::string text;
  for (const char c : in) {
    if (c != '\n' && c != '\r') text += c;
  }
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      const int d = c == '=' ? 0 : Sextet(c);
      if (c == '=' && (i + 4 != text.size() || k < 2)) return std::nullopt;
      if (d < 0 || (c != '=' && pad > 0)) return std::nullopt;
      pad += c == '=';
      v = (v << 6) | static_cast<uint32_t>(d);
    }
    out += static_cast<char>(v >> 16);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(v & 0xff);
  }
  return out;
}

bool Contains(std::initializer_list<std::string_view> list, std::string_view key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

// Why a kubeconfig field qrm knows but does not implement is refused (ignoring it would
// connect as someone else, or another way, than the file says).
std::string_view Unsupported(std::string_view key) {
  if (key == "exec") return "exec credential plugins are not supported";
  if (key == "auth-provider") return "auth providers are not supported";
  if (key == "username" || key == "password") return "basic authentication is not supported";
  if (key.substr(0, 2) == "as") return "impersonation is not supported";
  if (key == "proxy-url") return "proxies are not supported";
  return {};
}

Status CheckMap(const DocNode& node, std::string_view path) {
  if (node.kind == Kind::kMap) return Status::Ok();
  return InvalidArgumentError(fmt::format("{}: expected a mapping, got {}",
                                          path.empty() ? "(top)" : path, KindName(node.kind)));
}

Status CheckKeys(const DocNode& map, std::string_view path,
                 std::initializer_list<std::string_view> known,
                 std::initializer_list<std::string_view> unsupported = {}) {
  for (const auto& [key, value] : map.entries) {
    if (Contains(unsupported, key)) {
      return UnimplementedError(
          fmt::format("{}: {}; qrm authenticates with a bearer token or "
                      "a client certificate",
                      Join(path, key), Unsupported(key)));
    }
    if (!Contains(known, key)) {
      return InvalidArgumentError(fmt::format("{}: unknown field", Join(path, key)));
    }
  }
  return Status::Ok();
}

// A string field; absent or null is "".
StatusOr<std::string> GetString(const DocNode& map, std::string_view key, std::string_view path) {
  const DocNode* v = map.Find(key);
  if (v == nullptr || v->kind == Kind::kNull) return std::string();
  if (v->kind != Kind::kScalar) {
    return InvalidArgumentError(
        fmt::format("{}: expected a string, got {}", Join(path, key), KindName(v->kind)));
  }
  return v->scalar;
}

StatusOr<bool> GetBool(const DocNode& map, std::string_view key, std::string_view path) {
  const DocNode* v = map.Find(key);
  if (v == nullptr || v->kind == Kind::kNull) return false;
  if (v->kind == Kind::kScalar && !v->quoted && (v->scalar == "true" || v->scalar == "false")) {
    return v->scalar == "true";
  }
  return InvalidArgumentError(
      fmt::format("{}: {}: expected true or false", Join(path, key),
                  v->kind == Kind::kScalar ? Quote(v->scalar) : KindName(v->kind)));
}

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir + "/" + path;
}

// Holds a PEM block of `type` ("CERTIFICATE"; "PRIVATE KEY" also matches "RSA PRIVATE KEY").
Status CheckPem(std::string_view pem, std::string_view type, std::string_view field,
                std::string_view shown) {
  constexpr std::string_view kBegin = "-----BEGIN ";
  const size_t begin = pem.find(kBegin);
  const size_t end = begin == std::string_view::npos ? begin : pem.find("-----", begin + 11);
  if (end != std::string_view::npos &&
      pem.substr(begin + kBegin.size(), end - begin - kBegin.size()).ends_with(type)) {
    return Status::Ok();
  }
  return InvalidArgumentError(
      fmt::format("{}: {}: not PEM data with a {} block", field, shown, type));
}

// A field that is either PEM data (base64 in the file) or a file holding it: fills `data` or
// the resolved `file`, after checking that it is PEM of `type`.
struct PemField {
  std::string_view data_key;
  std::string_view file_key;
  std::string_view type;
};

Status ReadPemField(const DocNode& map, std::string_view path, const PemField& f,
                    const std::string& base_dir, const FileReader& read, std::string& data,
                    std::string& file) {
  QRM_ASSIGN_OR_RETURN(const std::string encoded, GetString(map, f.data_key, path));
  QRM_ASSIGN_OR_RETURN(const std::string name, GetString(map, f.file_key, path));
  if (!encoded.empty() && !name.empty()) {
    return InvalidArgumentError(
        fmt::format("{}: both {} and {} are set; keep one", path, f.file_key, f.data_key));
  }
  if (!encoded.empty()) {
    const std::string field = Join(path, f.data_key);
    const std::optional<std::string> pem = DecodeBase64(encoded);
    if (!pem) {
      return InvalidArgumentError(
          fmt::format("{}: {}: not base64", field, Shown(f.data_key, encoded)));
    }
    QRM_RETURN_IF_ERROR(CheckPem(*pem, f.type, field, Shown(f.data_key, encoded)));
    data = *pem;
  }
  if (!name.empty()) {
    const std::string field = Join(path, f.file_key);
    file = Resolve(base_dir, name);
    StatusOr<std::string> pem = read(file);
    if (!pem.ok()) return pem.status().WithContext(field);
    QRM_RETURN_IF_ERROR(CheckPem(*pem, f.type, field, Quote(file)));
  }
  return Status::Ok();
}

Status ParseCluster(const DocNode& c, std::string_view path, const std::string& base_dir,
                    const FileReader& read, ClusterConfig& out) {
  QRM_RETURN_IF_ERROR(CheckKeys(
      c, path,
      {"server", "certificate-authority", "certificate-authority-data", "insecure-skip-tls-verify",
       "tls-server-name", "disable-compression", "extensions", "proxy-url"},
      {"proxy-url"}));
  QRM_ASSIGN_OR_RETURN(out.server, GetString(c, "server", path));
  if (out.server.empty()) return InvalidArgumentError(Join(path, "server") + ": missing");
  const StatusOr<Url> url = ParseUrl(out.server);
  if (!url.ok()) return url.status().WithContext(Join(path, "server"));
  QRM_ASSIGN_OR_RETURN(out.insecure_skip_tls_verify, GetBool(c, "insecure-skip-tls-verify", path));
  QRM_ASSIGN_OR_RETURN(out.tls_server_name, GetString(c, "tls-server-name", path));
  QRM_RETURN_IF_ERROR(GetBool(c, "disable-compression", path).status());
  const PemField ca{"certificate-authority-data", "certificate-authority", "CERTIFICATE"};
  QRM_RETURN_IF_ERROR(ReadPemField(c, path, ca, base_dir, read, out.ca_data, out.ca_file));
  if (out.insecure_skip_tls_verify && (!out.ca_data.empty() || !out.ca_file.empty())) {
    return InvalidArgumentError(
        fmt::format("{}: true with a certificate authority set: contradictory, keep one",
                    Join(path, "insecure-skip-tls-verify")));
  }
  return Status::Ok();
}

// A bearer token goes into a header line as it is.
Status CheckToken(std::string_view token, std::string_view field, std::string_view shown) {
  for (const char c : token) {
    if (static_cast<unsigned char>(c) <= ' ' || static_cast<unsigned char>(c) >= 0x7f) {
      return InvalidArgumentError(
          fmt::format("{}: {}: a blank or a byte that is not printable ASCII", field, shown));
    }
  }
  return Status::Ok();
}

Status ParseTokens(const DocNode& u, std::string_view path, const std::string& base_dir,
                   const FileReader& read, ClusterConfig& out) {
  QRM_ASSIGN_OR_RETURN(out.token, GetString(u, "token", path));
  QRM_ASSIGN_OR_RETURN(const std::string token_file, GetString(u, "tokenFile", path));
  if (!out.token.empty() && !token_file.empty()) {
    return InvalidArgumentError(
        fmt::format("{}: both token and tokenFile are set; keep one", path));
  }
  QRM_RETURN_IF_ERROR(CheckToken(out.token, Join(path, "token"), "<redacted>"));
  if (token_file.empty()) return Status::Ok();
  const std::string field = Join(path, "tokenFile");
  out.token_file = Resolve(base_dir, token_file);
  StatusOr<std::string> token = read(out.token_file);
  if (!token.ok()) return token.status().WithContext(field);
  const std::string trimmed = Trimmed(*token);
  if (trimmed.empty()) {
    return InvalidArgumentError(fmt::format("{}: {}: empty", field, Quote(out.token_file)));
  }
  return CheckToken(trimmed, field, Quote(out.token_file));
}

Status ParseUser(const DocNode& u, std::string_view path, const std::string& base_dir,
                 const FileReader& read, ClusterConfig& out) {
  QRM_RETURN_IF_ERROR(
      CheckKeys(u, path,
                {"token", "tokenFile", "client-certificate", "client-certificate-data",
                 "client-key", "client-key-data", "extensions", "exec", "auth-provider", "username",
                 "password", "as", "as-uid", "as-groups", "as-user-extra"},
                {"exec", "auth-provider", "username", "password", "as", "as-uid", "as-groups",
                 "as-user-extra"}));
  QRM_RETURN_IF_ERROR(ParseTokens(u, path, base_dir, read, out));
  const PemField cert{"client-certificate-data", "client-certificate", "CERTIFICATE"};
  const PemField key{"client-key-data", "client-key", "PRIVATE KEY"};
  QRM_RETURN_IF_ERROR(
      ReadPemField(u, path, cert, base_dir, read, out.client_cert_data, out.client_cert_file));
  QRM_RETURN_IF_ERROR(
      ReadPemField(u, path, key, base_dir, read, out.client_key_data, out.client_key_file));
  const bool has_cert = !out.client_cert_data.empty() || !out.client_cert_file.empty();
  const bool has_key = !out.client_key_data.empty() || !out.client_key_file.empty();
  if (has_cert != has_key) {
    return InvalidArgumentError(fmt::format("{}: a client {} without its {}", path,
                                            has_cert ? "certificate" : "key",
                                            has_cert ? "key" : "certificate"));
  }
  return Status::Ok();
}

struct Named {
  const DocNode* node = nullptr;  // the entry's inner mapping ("context", "cluster", "user")
  std::string path;               // "contexts[1].context"
};

// The entry named `name` of the list `list` (each entry {name, <inner>}), after checking the
// shape and the names of every entry. `referrer` is the field that named it.
StatusOr<Named> FindNamed(const DocNode& root, std::string_view list, std::string_view inner,
                          std::string_view name, std::string_view referrer) {
  static const DocNode kEmptyMap{DocNode::Kind::kMap};
  const DocNode* seq = root.Find(list);
  if (seq != nullptr && seq->kind != Kind::kNull && seq->kind != Kind::kSeq) {
    return InvalidArgumentError(
        fmt::format("{}: expected a sequence, got {}", list, KindName(seq->kind)));
  }
  std::set<std::string> seen;
  Named found;
  for (size_t i = 0; seq != nullptr && i < seq->items.size(); ++i) {
    const DocNode& item = seq->items[i];
    const std::string path = fmt::format("{}[{}]", list, i);
    QRM_RETURN_IF_ERROR(CheckMap(item, path));
    QRM_RETURN_IF_ERROR(CheckKeys(item, path, {"name", inner}));
    QRM_ASSIGN_OR_RETURN(const std::string n, GetString(item, "name", path));
    if (n.empty()) return InvalidArgumentError(path + ".name: missing");
    if (!seen.insert(n).second) {
      return InvalidArgumentError(
          fmt::format("{}.name: {}: a second entry of that name", path, Quote(n)));
    }
    if (n != name) continue;
    found.path = Join(path, inner);
    found.node = item.Find(inner);
    if (found.node == nullptr || found.node->kind == Kind::kNull) found.node = &kEmptyMap;
    QRM_RETURN_IF_ERROR(CheckMap(*found.node, found.path));
  }
  if (found.node == nullptr) {
    return NotFoundError(
        fmt::format("{}: {}: no entry of that name in {}", referrer, Quote(name), list));
  }
  return found;
}

Status CheckHeader(const DocNode& root) {
  QRM_RETURN_IF_ERROR(CheckMap(root, ""));
  QRM_RETURN_IF_ERROR(CheckKeys(root, "",
                                {"apiVersion", "kind", "preferences", "current-context", "clusters",
                                 "contexts", "users", "extensions"}));
  QRM_ASSIGN_OR_RETURN(const std::string api_version, GetString(root, "apiVersion", ""));
  QRM_ASSIGN_OR_RETURN(const std::string kind, GetString(root, "kind", ""));
  if (!api_version.empty() && api_version != "v1") {
    return InvalidArgumentError(fmt::format("apiVersion: {}: expected v1", Quote(api_version)));
  }
  if (!kind.empty() && kind != "Config") {
    return InvalidArgumentError(fmt::format("kind: {}: expected Config", Quote(kind)));
  }
  return Status::Ok();
}

// The context to use and the cluster and user it names.
StatusOr<Named> ParseContext(const DocNode& root, std::string_view context, ClusterConfig& out,
                             std::string* cluster, std::string* user) {
  QRM_ASSIGN_OR_RETURN(std::string name, GetString(root, "current-context", ""));
  std::string_view referrer = "current-context";
  if (!context.empty()) {
    name = std::string(context);
    referrer = "the context asked for";
  }
  if (name.empty()) {
    return FailedPreconditionError("current-context: not set, and no context was asked for");
  }
  QRM_ASSIGN_OR_RETURN(Named ctx, FindNamed(root, "contexts", "context", name, referrer));
  QRM_RETURN_IF_ERROR(
      CheckKeys(*ctx.node, ctx.path, {"cluster", "user", "namespace", "extensions"}));
  QRM_ASSIGN_OR_RETURN(*cluster, GetString(*ctx.node, "cluster", ctx.path));
  QRM_ASSIGN_OR_RETURN(*user, GetString(*ctx.node, "user", ctx.path));
  QRM_ASSIGN_OR_RETURN(out.namespace_name, GetString(*ctx.node, "namespace", ctx.path));
  if (cluster->empty()) return InvalidArgumentError(Join(ctx.path, "cluster") + ": missing");
  out.source = fmt::format("context {}", Quote(name));
  return ctx;
}

Status CheckPort(const std::string& port) {
  bool digits = !port.empty() && port.size() <= 5;
  for (const char c : port) digits = digits && c >= '0' && c <= '9';
  if (digits && std::stoi(port) >= 1 && std::stoi(port) <= 65535) return Status::Ok();
  return InvalidArgumentError(
      fmt::format("KUBERNETES_SERVICE_PORT: {}: not a port number", Quote(port)));
}

}  // namespace

EnvGetter ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

FileReader RealFileReader() {
  return [](const std::string& path) -> StatusOr<std::string> {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError(errno, "open", Quote(path));
    std::string data;
    char buffer[8192];
    while (true) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        ::close(fd);
        return ErrnoError(err, "read", Quote(path));
      }
      if (n == 0) break;
      data.append(buffer, static_cast<size_t>(n));
      if (data.size() > kMaxFileBytes) {
        ::close(fd);
        return InvalidArgumentError(
            fmt::format("{}: larger than {} bytes", Quote(path), kMaxFileBytes));
      }
    }
    ::close(fd);
    return data;
  };
}

StatusOr<ClusterConfig> LoadInClusterConfig(const std::string& root, const EnvGetter& env,
                                            const FileReader& read) {
  const std::optional<std::string> host = env("KUBERNETES_SERVICE_HOST");
  const std::optional<std::string> port = env("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    return FailedPreconditionError(fmt::format(
        "not in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set "
        "(they are {} and {})",
        host ? Quote(*host) : "unset", port ? Quote(*port) : "unset"));
  }
  QRM_RETURN_IF_ERROR(CheckPort(*port));
  ClusterConfig config;
  const bool v6 = host->find(':') != std::string::npos;
  config.server = fmt::format("https://{}{}{}:{}", v6 ? "[" : "", *host, v6 ? "]" : "", *port);
  const StatusOr<Url> url = ParseUrl(config.server);
  if (!url.ok()) return url.status().WithContext("KUBERNETES_SERVICE_HOST");
  const std::string dir = root + std::string(kServiceAccountDir);
  config.token_file = dir + "/token";
  config.ca_file = dir + "/ca.crt";
  StatusOr<std::string> token = read(config.token_file);
  if (!token.ok()) return token.status().WithContext("in-cluster service account token");
  if (Trimmed(*token).empty()) {
    return InvalidArgumentError(fmt::format("in-cluster token {}: empty", config.token_file));
  }
  StatusOr<std::string> ca = read(config.ca_file);
  if (!ca.ok()) return ca.status().WithContext("in-cluster CA");
  QRM_RETURN_IF_ERROR(CheckPem(*ca, "CERTIFICATE", "in-cluster CA", Quote(config.ca_file)));
  if (StatusOr<std::string> ns = read(dir + "/namespace"); ns.ok()) {
    config.namespace_name = Trimmed(*ns);
  }
  config.source = "in-cluster";
  return config;
}

StatusOr<ClusterConfig> ParseKubeconfig(std::string_view text, const std::string& base_dir,
                                        std::string_view context, const FileReader& read) {
  QRM_ASSIGN_OR_RETURN(DocNode root, ParseYamlOrJson(text));
  if (root.kind == Kind::kNull) root.kind = Kind::kMap;  // an empty file
  QRM_RETURN_IF_ERROR(CheckHeader(root));
  ClusterConfig config;
  std::string cluster_name;
  std::string user_name;
  QRM_ASSIGN_OR_RETURN(const Named ctx,
                       ParseContext(root, context, config, &cluster_name, &user_name));
  QRM_ASSIGN_OR_RETURN(const Named cluster, FindNamed(root, "clusters", "cluster", cluster_name,
                                                      Join(ctx.path, "cluster")));
  QRM_RETURN_IF_ERROR(ParseCluster(*cluster.node, cluster.path, base_dir, read, config));
  if (!user_name.empty()) {
    QRM_ASSIGN_OR_RETURN(const Named user,
                         FindNamed(root, "users", "user", user_name, Join(ctx.path, "user")));
    QRM_RETURN_IF_ERROR(ParseUser(*user.node, user.path, base_dir, read, config));
  }
  return config;
}

StatusOr<ClusterConfig> LoadKubeconfig(const std::string& path, std::string_view context,
                                       const FileReader& read) {
  StatusOr<std::string> text = read(path);
  if (!text.ok()) return text.status().WithContext("kubeconfig");
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  StatusOr<ClusterConfig> config = ParseKubeconfig(*text, dir, context, read);
  if (!config.ok()) return config.status().WithContext(fmt::format("kubeconfig {}", path));
  config->source = fmt::format("kubeconfig {} {}", path, config->source);
  return config;
}

StatusOr<ClusterConfig> LoadClusterConfig(const std::string& kubeconfig,
                                          const std::string& in_cluster_root, const EnvGetter& env,
                                          const FileReader& read) {
  if (!kubeconfig.empty()) return LoadKubeconfig(kubeconfig, "", read);
  if (const std::optional<std::string> k = env("KUBECONFIG"); k && !k->empty()) {
    if (k->find(':') != std::string::npos) {
      return UnimplementedError(
          fmt::format("KUBECONFIG: {}: a list of files is not supported; name one", Quote(*k)));
    }
    return LoadKubeconfig(*k, "", read);
  }
  if (const std::optional<std::string> host = env("KUBERNETES_SERVICE_HOST");
      host && !host->empty()) {
    return LoadInClusterConfig(in_cluster_root, env, read);
  }
  if (const std::optional<std::string> home = env("HOME"); home && !home->empty()) {
    const std::string path = *home + "/.kube/config";
    const StatusOr<std::string> text = read(path);
    if (text.ok() || text.status().code() != StatusCode::kNotFound) {
      return LoadKubeconfig(path, "", read);
    }
  }
  return FailedPreconditionError(
      "no Kubernetes API configuration: no --kubeconfig, KUBECONFIG unset, not in a pod "
      "(KUBERNETES_SERVICE_HOST unset), no $HOME/.kube/config");
}

}  // namespace qrm::kube
