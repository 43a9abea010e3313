//! Asks a live SCM whether it is in safe mode and which pipelines it knows, as the harness's
//! readiness wait does. For checking the SCM client against a real cluster.
//!
//! ```sh
//! cargo run --release -p ozone-rpc --example scm_call -- 172.18.0.3:9860
//! ```
use std::time::{Duration, Instant};

use ozone_rpc::ScmClient;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(addr) = std::env::args().nth(1) else {
        eprintln!("usage: scm_call HOST:PORT");
        std::process::exit(2);
    };
    let scm = ScmClient::new(
        addr.parse().expect("an address HOST:PORT"),
        "hadoop",
        Duration::from_secs(5),
    );
    let started = Instant::now();
    println!(
        "in safe mode: {:?} ({:?})",
        scm.in_safe_mode().await,
        started.elapsed()
    );
    let started = Instant::now();
    match scm.pipelines().await {
        Ok(pipelines) => {
            for p in &pipelines {
                println!("{p:?} open RATIS/THREE: {}", p.is_open_ratis_three());
            }
            println!("{} pipelines ({:?})", pipelines.len(), started.elapsed());
        }
        Err(e) => println!("pipelines: {e}"),
    }
}
