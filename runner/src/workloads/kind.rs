//! One interface for every workload: what it tells the terminal it will do, and playing it until
//! its duration is over. `for_scenario` picks the implementation from the scenario's `kind:`,
//! so the run never branches on the kind itself.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::WorkloadConfig;
use crate::error::{HarnessError, Result};
use crate::recorder::Recorder;
use crate::run_folder::FencingLog;
use crate::scenario::units::format_duration;
use crate::scenario::{FencingSpec, LeaseSpec, WorkloadKind, WorkloadSpec};
use crate::systems::SystemAdapter;

/// What a workload plays against.
pub struct WorkloadContext {
    pub adapter: Arc<dyn SystemAdapter>,
    pub recorder: Arc<Recorder>,
    pub config: Arc<WorkloadConfig>,
    /// The run folder, for a workload's own side file (fencing.jsonl).
    pub run_dir: PathBuf,
    pub cancel: CancellationToken,
    /// When the processes stop (the duration, or later with `lasts-past:`).
    pub end: Arc<super::WorkloadEnd>,
}

#[async_trait]
pub trait Workload: Send + Sync {
    /// One line for the terminal: what the processes do, how fast, for how long.
    fn describe(&self, config: &WorkloadConfig) -> String;

    /// Plays until the duration is over or `cancel` fires, recording every operation.
    async fn play(&self, ctx: WorkloadContext) -> Result<()>;
}

/// The workload a scenario's `workload:` section asks for.
pub fn for_scenario(spec: &WorkloadSpec) -> Box<dyn Workload> {
    match spec.kind.value {
        WorkloadKind::Fencing => Box::new(Fencing {
            shape: spec
                .fencing
                .as_ref()
                .map(|f| f.value.clone())
                .unwrap_or_default(),
        }),
        WorkloadKind::Lease => Box::new(Lease {
            shape: spec
                .lease
                .as_ref()
                .map(|l| l.value.clone())
                .unwrap_or_default(),
        }),
        // register, set, create, s3-object, stream: processes through the adapter's clients.
        _ => Box::new(Processes),
    }
}

/// Processes, each with one operation in flight, through the system adapter's clients.
struct Processes;

#[async_trait]
impl Workload for Processes {
    fn describe(&self, c: &WorkloadConfig) -> String {
        let length = format_duration(c.duration);
        if c.kind == WorkloadKind::Stream {
            format!(
                "{} processes streaming fresh keys of {} bytes, {}/s for {length}",
                c.processes, c.stream_length, c.rate
            )
        } else {
            format!(
                "{} processes, {} keys, {}/s for {length}",
                c.processes, c.keys, c.rate
            )
        }
    }

    async fn play(&self, ctx: WorkloadContext) -> Result<()> {
        super::run_until(ctx.adapter, ctx.recorder, ctx.config, ctx.cancel, ctx.end).await;
        Ok(())
    }
}

/// Fencing rounds of conditional writes through one object-store node (fencing.rs).
struct Fencing {
    shape: FencingSpec,
}

#[async_trait]
impl Workload for Fencing {
    fn describe(&self, c: &WorkloadConfig) -> String {
        format!(
            "fencing rounds through {}, {}/s for {}",
            c.nodes[0],
            c.rate,
            format_duration(c.duration)
        )
    }

    async fn play(&self, ctx: WorkloadContext) -> Result<()> {
        let c = &ctx.config;
        let store = ctx
            .adapter
            .object_store(&c.nodes[0], c.timeout)
            .ok_or_else(|| {
                HarnessError::BadInput("the fencing workload needs an object store".into())
            })?;
        let log = FencingLog::create(&ctx.run_dir)
            .map_err(|e| HarnessError::infra(format!("cannot write the run folder: {e}")))?;
        super::fencing::run_rounds(store, &ctx.recorder, &log, c, &self.shape, ctx.cancel).await;
        Ok(())
    }
}

/// Files hsync'd, raced by recoverLease and closed (lease.rs).
struct Lease {
    shape: LeaseSpec,
}

#[async_trait]
impl Workload for Lease {
    fn describe(&self, c: &WorkloadConfig) -> String {
        format!(
            "hsync'd files raced by recoverLease, {}/s for {}",
            c.rate,
            format_duration(c.duration)
        )
    }

    async fn play(&self, ctx: WorkloadContext) -> Result<()> {
        super::lease::run_files(
            ctx.adapter,
            ctx.recorder,
            ctx.config,
            self.shape.clone(),
            ctx.cancel,
        )
        .await;
        Ok(())
    }
}
