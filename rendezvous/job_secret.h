#pragma once
// Why: the per-job secret that every rendezvous client must prove it knows. The launcher
// generates it (32 random bytes from the OS) and hands it to its ranks; client and server only
// ever exchange HMAC-SHA256 proofs over fresh nonces (protocol.h), never the secret. The class
// has no stream operator and its hex form is produced only on request, so that it does not end
// up in a log by accident; its bytes are wiped when it is destroyed.
// Thread-safety: immutable after construction; const methods may run on any thread.

#include <string>
#include <string_view>

namespace runrun::rendezvous {

class JobSecret {
 public:
  static constexpr size_t kBytes = 32;

  // 32 random bytes from the OS (getrandom).
  static JobSecret generate();
  // Parses 64 hex digits. `origin` names where the text came from (an environment variable) for
  // the error message, which never contains the text itself.
  static JobSecret from_hex(std::string_view hex, std::string_view origin);
  // No secret: a client holding it presents no proof and is refused by the server.
  JobSecret() = default;

  JobSecret(const JobSecret& other) = default;
  JobSecret& operator=(const JobSecret& other) = default;
  ~JobSecret();

  bool empty() const { return bytes_.empty(); }
  // The form handed to ranks (RUNRUN_RENDEZVOUS_SECRET). Never log it.
  std::string hex() const;
  // A secret that every process holding this one computes alike from `material`:
  // HMAC-SHA256(this secret, or a fixed key when empty, "runrun-derived" | material). Direct
  // launches (launch_environment.h) derive theirs from the job's identity.
  JobSecret derived(std::string_view material) const;
  // HMAC-SHA256(secret, role | server_nonce | client_nonce); empty when there is no secret.
  std::string proof(std::string_view role, std::string_view server_nonce,
                    std::string_view client_nonce) const;

 private:
  std::string bytes_;
};

// `size` random bytes from the OS (getrandom); throws InternalError when the OS has none.
std::string random_bytes(size_t size);

// Compares in time that depends only on the sizes, not on where the bytes differ.
bool equal_in_constant_time(std::string_view a, std::string_view b);

}  // namespace runrun::rendezvous
