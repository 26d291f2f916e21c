#include "rendezvous/job_secret.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace runrun::rendezvous {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string random_bytes(size_t size) {
  std::string out(size, '\0');
  size_t filled = 0;
  while (filled < size) {
    const ssize_t got = getrandom(out.data() + filled, size - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      throw InternalError(RUNRUN_WHERE, std::string("getrandom failed: ") + std::strerror(errno) +
                                            "; the job secret needs the OS random source");
    }
    filled += static_cast<size_t>(got);
  }
  return out;
}

bool equal_in_constant_time(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

JobSecret JobSecret::generate() {
  JobSecret secret;
  secret.bytes_ = random_bytes(kBytes);
  return secret;
}

JobSecret JobSecret::from_hex(std::string_view hex, std::string_view origin) {
  RUNRUN_ENFORCE(hex.size() == 2 * kBytes, InvalidArgumentError,
                 std::string(origin) + " is malformed: expected " + std::to_string(2 * kBytes) +
                     " hex digits, got " + std::to_string(hex.size()) +
                     " characters (the runrun launcher sets it; for a job started by srun or "
                     "torchrun, set it to the output of `openssl rand -hex 32`)");
  JobSecret secret;
  secret.bytes_.resize(kBytes);
  for (size_t i = 0; i < kBytes; ++i) {
    const int high = hex_value(hex[2 * i]);
    const int low = hex_value(hex[2 * i + 1]);
    RUNRUN_ENFORCE(high >= 0 && low >= 0, InvalidArgumentError,
                   std::string(origin) +
                       " is malformed: it holds a character that is not a hex "
                       "digit (the runrun launcher sets it; for a job started "
                       "by srun or torchrun, set it to the output of "
                       "`openssl rand -hex 32`)");
    secret.bytes_[i] = static_cast<char>(high * 16 + low);
  }
  return secret;
}

JobSecret::~JobSecret() {
  if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
}

std::string JobSecret::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes_.size());
  for (char byte : bytes_) {
    const auto value = static_cast<unsigned char>(byte);
    out.push_back(kDigits[value >> 4]);
    out.push_back(kDigits[value & 0xf]);
  }
  return out;
}

JobSecret JobSecret::derived(std::string_view material) const {
  static constexpr std::string_view kFixedKey = "runrun direct launch, no user secret";
  const std::string_view key = bytes_.empty() ? kFixedKey : std::string_view(bytes_);
  std::string message("runrun-derived|");
  message.append(material);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  const unsigned char* ok = HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                                 reinterpret_cast<const unsigned char*>(message.data()),
                                 message.size(), digest, &digest_size);
  RUNRUN_ENFORCE(ok != nullptr && digest_size == kBytes, InternalError,
                 "HMAC-SHA256 failed in libcrypto");
  JobSecret secret;
  secret.bytes_.assign(reinterpret_cast<const char*>(digest), digest_size);
  OPENSSL_cleanse(digest, sizeof(digest));
  return secret;
}

std::string JobSecret::proof(std::string_view role, std::string_view server_nonce,
                             std::string_view client_nonce) const {
  if (bytes_.empty()) return {};
  std::string message;
  message.append(role).append(server_nonce).append(client_nonce);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  const unsigned char* ok = HMAC(EVP_sha256(), bytes_.data(), static_cast<int>(bytes_.size()),
                                 reinterpret_cast<const unsigned char*>(message.data()),
                                 message.size(), digest, &digest_size);
  RUNRUN_ENFORCE(ok != nullptr, InternalError, "HMAC-SHA256 failed in libcrypto");
  return std::string(reinterpret_cast<const char*>(digest), digest_size);
}

}  // namespace runrun::rendezvous
