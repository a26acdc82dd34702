//! The report's plan digest: what its seed drew, in one line, so that two runs of one commit
//! show they drew the same cases (and another seed, other ones). Four parts:
//!
//! - workloads: every live cell's [`cell_digest`] (its differential workloads as
//!   `workload.yaml` serializes them), by tag, page size and kind;
//! - faults: the fault suite's ([`crate::fault::suite::plan_digest`]: writer seeds, kill
//!   points, writer ops, damage);
//! - power-loss: the power-loss suite's ([`crate::powerloss::suite::plan_digest`]: writer
//!   seeds and ops, the crash states chosen);
//! - disk-error: the disk-error suite's ([`crate::diskerr::suite::plan_digest`]: writer seeds,
//!   failure schedules, kill points and ops).
//!
//! Not the bytes the official library wrote (its AES IVs come from `time()`), nor verdicts or
//! counts (the report's own fields say those). Merged shards ([`crate::report::merge`]) get
//! the digest of the merged rows and sections: the same whatever order the shards come in.

use serde::{Deserialize, Serialize};

use crate::differential::property::draw_workloads;
use crate::differential::workload::many_keys_workload;
use crate::report::cell::CellSpec;
use crate::report::Report;
use crate::vocab::digest::{short, PlanHasher};
use crate::vocab::kind::Features;

/// The report's plan digest and its parts (64 hex digits each).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanDigest {
    /// The digest of the four parts.
    pub plan: String,
    /// The live cells' workloads.
    pub workloads: String,
    /// The fault suite's plan (`None`: it did not run).
    pub faults: Option<String>,
    /// The power-loss suite's plan (`None`: it did not run).
    pub powerloss: Option<String>,
    /// The disk-error suite's plan (`None`: it did not run, or a report from before it had
    /// digests).
    #[serde(default)]
    pub diskerr: Option<String>,
}

impl PlanDigest {
    /// `plan digest: HEX (workloads HEX16, faults HEX16, power-loss HEX16, disk-error HEX16)`.
    pub fn phrase(&self) -> String {
        let part = |d: &Option<String>| d.as_deref().map_or("not run", short).to_string();
        format!(
            "plan digest: {} (workloads {}, faults {}, power-loss {}, disk-error {})",
            self.plan,
            short(&self.workloads),
            part(&self.faults),
            part(&self.powerloss),
            part(&self.diskerr)
        )
    }
}

/// The digest of the workloads a live cell draws at `page_size` for a version with `features`
/// (what [`crate::report::cell::run_cell`] runs): per property seed its first `spec.cases`
/// workloads ([`draw_workloads`], the cases a property run starts from), then the many-keys
/// workload. Nothing is run. The property seeds themselves are not in it (the workloads they
/// draw are), so that the digest shows what a seed drew, not which seed it was.
pub fn cell_digest(spec: &CellSpec, features: Features, page_size: u64) -> String {
    let gen = spec.gen.unwrap_or_default();
    let mut h = PlanHasher::new("cell");
    h.add(&(
        &spec.tag,
        spec.kind,
        spec.cases,
        spec.seeds.len(),
        spec.many_keys,
        spec.real_clock,
        gen,
        page_size,
    ));
    for &seed in &spec.seeds {
        for w in draw_workloads(spec.kind, features, gen, seed, spec.cases as usize) {
            h.add(&w);
        }
    }
    if spec.many_keys > 0 {
        h.add(&many_keys_workload(spec.kind, features, spec.many_keys, 1));
    }
    h.hex()
}

impl Report {
    /// The plan digest of this report: its live cells' [`cell_digest`]s (sorted by tag, page
    /// size and kind: the order rows run or merge in does not count), the fault, power-loss
    /// and disk-error sections' digests, and their digest.
    pub fn plan_digest(&self) -> PlanDigest {
        let mut cells: Vec<(&str, u64, &str, &str)> = self
            .versions
            .iter()
            .flat_map(|r| {
                r.cells.iter().filter_map(|(kind, c)| {
                    let d = c.plan_digest.as_deref()?;
                    Some((r.tag.as_str(), r.page_size, kind.as_str(), d))
                })
            })
            .collect();
        cells.sort();
        let mut w = PlanHasher::new("workloads");
        for c in &cells {
            w.add(c);
        }
        let workloads = w.hex();
        let faults = self.faults.as_ref().and_then(|f| f.plan_digest());
        let powerloss = self.powerloss.as_ref().and_then(|p| p.plan_digest());
        let diskerr = self.diskerr.as_ref().and_then(|d| d.plan_digest());
        let plan = PlanHasher::new("report plan")
            .add(&(&workloads, &faults, &powerloss, &diskerr))
            .hex();
        PlanDigest {
            plan,
            workloads,
            faults,
            powerloss,
            diskerr,
        }
    }
}
