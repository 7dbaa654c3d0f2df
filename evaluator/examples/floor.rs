//! The floor of grading and verification, as a program: for each bundle file named on
//! the command line, exactly the four costs every bundle pays at least once
//! (docs/performance.md, "Instructions per bundle (callgrind)"), and nothing else:
//!
//! * SHA-256 over the file's bytes,
//! * SHA-512 over the file's bytes (with sha2 0.11, the implementation the verification
//!   of a bundle's signature hashes its payload with),
//! * one Ed25519 verification (a fixed short message: its fixed cost; the hashing of a
//!   payload is the SHA-512 above),
//! * one decode of payload and records into the model types
//!   ([`mcp_probe_schema::bundle::decode_verified`]), dropped after.
//!
//! The same four as the floor of `cargo bench --bench throughput`, run over files so that
//! `scripts/instructions.sh` can count its instructions under callgrind beside
//! `mcp-grade`'s. Same allocator as `mcp-grade` (mimalloc). The key and signature are
//! made once at the start (part of the fixed start-up the script subtracts). Prints the
//! number of bundles to stderr; exit 2 when a file cannot be read or decoded.
//!
//! `cargo run --release -p mcp-probe-evaluator --example floor -- examples/*.mcpev`

use std::hint::black_box;
use std::process::ExitCode;

use ed25519_dalek::{Signer, SigningKey, Verifier};
use sha2::{Digest, Sha256};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let key = SigningKey::from_bytes(&[7; 32]);
    let msg = [0x5a_u8; 256];
    let sig = key.sign(&msg);
    let public = key.verifying_key();
    let mut n = 0usize;
    for path in std::env::args_os().skip(1) {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("floor: {}: {e}", path.to_string_lossy());
                return ExitCode::from(2);
            }
        };
        black_box(Sha256::digest(black_box(&bytes)));
        black_box(<sha2_011::Sha512 as sha2_011::Digest>::digest(black_box(
            &bytes,
        )));
        if public.verify(black_box(&msg), black_box(&sig)).is_err() {
            eprintln!("floor: the fixed signature did not verify");
            return ExitCode::from(2);
        }
        match mcp_probe_schema::bundle::decode_verified(black_box(&bytes)) {
            Ok(v) => drop(black_box(v)),
            Err(e) => {
                eprintln!("floor: {}: {e}", path.to_string_lossy());
                return ExitCode::from(2);
            }
        }
        n += 1;
    }
    eprintln!("floor: {n} bundles");
    ExitCode::SUCCESS
}
