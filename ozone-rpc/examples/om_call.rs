//! Talks to live Ozone Managers by hand: each argument after the addresses is one call, and
//! each answer (or error) is printed with its time. For checking the client against a real
//! cluster (harness/tests/fixtures/ozone records what it answered).
//!
//! ```sh
//! cargo run --release -p ozone-rpc --example om_call -- 127.0.0.1:32771,127.0.0.1:32772 \
//!     volume:chaos bucket:chaos/keys lookup:chaos/keys/k0
//! ```
use std::net::SocketAddr;
use std::time::Instant;

use ozone_rpc::{BucketLayout, OmClient, OmRequest};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let Some(addrs) = args.next() else {
        eprintln!("usage: om_call HOST:PORT[,HOST:PORT...] volume:V bucket:V/B fso-bucket:V/B lookup:V/B/K create:V/B/K:LEN rename:V/B/FROM:TO ...");
        std::process::exit(2);
    };
    let addrs: Vec<SocketAddr> = addrs
        .split(',')
        .map(|a| a.parse().expect("an address HOST:PORT"))
        .collect();
    let mut om = OmClient::connect(addrs, "hadoop");
    for call in args {
        let (what, rest) = call.split_once(':').expect("WHAT:ARGS");
        let parts: Vec<&str> = rest.split('/').collect();
        let req = match (what, parts.as_slice()) {
            ("volume", [v]) => OmRequest::create_volume(v, "hadoop", "hadoop"),
            ("bucket", [v, b]) => OmRequest::create_bucket(v, b, Some(BucketLayout::ObjectStore)),
            ("fso-bucket", [v, b]) => {
                OmRequest::create_bucket(v, b, Some(BucketLayout::FileSystemOptimized))
            }
            ("lookup", [v, b, k]) => OmRequest::lookup_key(v, b, k),
            _ => {
                eprintln!("unknown call {call}");
                std::process::exit(2);
            }
        };
        let started = Instant::now();
        let answer = om.call(req).await;
        println!("{call}: {:?} in {:.1?}", answer, started.elapsed());
    }
}
