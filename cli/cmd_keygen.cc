// imgtool keygen --out PREFIX: a P-256 key pair for signing (PREFIX.key 0600, PREFIX.pub).
#include <iostream>

#include "cli/subcommand.h"
#include "core/error.h"
#include "sign/keys.h"

namespace imgtool::cli {
namespace {

struct KeygenFlags {
  std::string out, passphrase_env;
  bool force = false;
};

// --out names the two files: "" names none, and a prefix with no file name ("keys/") would
// make hidden ".key" files nobody asked for (sign::key_files).
void check_out(const std::string& out) {
  if (out.empty()) throw InputError(R"(--out: expected a file path, found "")");
  try {
    sign::key_files(out);
  } catch (const InputError& e) {
    throw InputError(std::string("--out: ") + e.what());
  }
}

int run_keygen(const KeygenFlags& f) {
  check_out(f.out);
  std::string pass = sign::passphrase_from_env(f.passphrase_env);
  sign::KeyFiles k = sign::write_key_pair(*sign::generate_key(), f.out, pass, f.force);
  std::cout << "private key: " << k.private_key.string() << " (mode 0600"
            << (pass.empty() ? ", unencrypted" : ", encrypted") << ")\npublic key:  " << k.public_key.string() << "\n";
  return 0;
}

Registration keygen_registration{
    {"keygen", "Create an ECDSA P-256 signing key pair (PREFIX.key, mode 0600, and PREFIX.pub); cosign-compatible",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<KeygenFlags>();
       sub.add_option("--out", f->out, "path prefix, e.g. keys/release")->required();
       sub.add_option("--passphrase-env", f->passphrase_env,
                      "encrypt the private key with the passphrase held in this environment variable");
       sub.add_flag("--force", f->force, "replace existing key files");
       return [f] { return run_keygen(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
