//! The JSON document a conformance hunt writes (`conformance hunt --json FILE`, schema
//! [`SCHEMA`]) and `track-upstream hunt-issues` reads: one place for its types, so that the
//! writer and the reader cannot drift apart. Data only (serde); what the fields mean in a hunt
//! is in `conformance/README.md` ("Hunt").
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};

/// The `schema` field of the document this crate describes.
pub const SCHEMA: &str = "conformance-hunt/3";

/// One hunt's document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HuntReport {
    /// [`SCHEMA`].
    pub schema: String,
    /// The seed every run's and batch's seed is derived from.
    pub base_seed: u64,
    /// The time budget, in minutes.
    pub minutes: f64,
    /// How long the hunt ran, in seconds.
    pub elapsed_s: f64,
    /// The versions hunted (tags, oldest first).
    pub versions: Vec<String>,
    /// The suites that ran, in [`Suite::ALL`] order.
    pub suites: Vec<Suite>,
    /// Work done per suite.
    pub runs: Runs,
    /// One entry per failure signature.
    pub signatures: Vec<Signature>,
}

/// Work done per suite: property runs (differential, migration), judged states (fault, power
/// loss, disk error).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Runs {
    /// Differential runs (the reader against one version's store).
    pub differential: u64,
    /// Migration runs (a store written by one version, continued by another).
    pub migration: u64,
    /// Fault-suite states judged (damaged stores of killed writers).
    pub fault: u64,
    /// Power-loss crash states judged.
    pub powerloss: u64,
    /// Disk-error states judged (what official writers left while file calls failed).
    pub diskerr: u64,
}

impl Runs {
    /// The count of `suite`.
    pub fn of(&self, suite: Suite) -> u64 {
        match suite {
            Suite::Differential => self.differential,
            Suite::Migration => self.migration,
            Suite::Fault => self.fault,
            Suite::Powerloss => self.powerloss,
            Suite::Diskerr => self.diskerr,
        }
    }

    /// The count of `suite`, to add to.
    pub fn of_mut(&mut self, suite: Suite) -> &mut u64 {
        match suite {
            Suite::Differential => &mut self.differential,
            Suite::Migration => &mut self.migration,
            Suite::Fault => &mut self.fault,
            Suite::Powerloss => &mut self.powerloss,
            Suite::Diskerr => &mut self.diskerr,
        }
    }
}

/// The suite a failure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    /// One version's differential property runs.
    Differential,
    /// A store written by one version and continued by another.
    Migration,
    /// The fault suite's damaged states (killed writers, truncations, bit flips).
    Fault,
    /// The power-loss suite's crash states (lost and torn pages).
    Powerloss,
    /// The disk-error suite's states (official writers whose file calls failed).
    Diskerr,
}

impl Suite {
    /// Every suite, in the order a hunt's round runs them.
    pub const ALL: [Suite; 5] = [
        Suite::Differential,
        Suite::Migration,
        Suite::Fault,
        Suite::Powerloss,
        Suite::Diskerr,
    ];

    /// Its name in the JSON (and on the command line).
    pub fn name(self) -> &'static str {
        match self {
            Suite::Differential => "differential",
            Suite::Migration => "migration",
            Suite::Fault => "fault",
            Suite::Powerloss => "powerloss",
            Suite::Diskerr => "diskerr",
        }
    }

    /// Whether its failures are saved states (fault, power loss, disk error) rather than
    /// workloads: its [`Runs`] count states, its examples' text describes a state.
    pub fn states(self) -> bool {
        matches!(self, Suite::Fault | Suite::Powerloss | Suite::Diskerr)
    }
}

impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Suite {
    type Err = String;

    /// Parses [`Suite::name`].
    fn from_str(s: &str) -> Result<Suite, String> {
        Suite::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Suite::ALL.iter().map(|x| x.name()).collect();
                format!("no suite {s:?}; one of: {}", names.join(", "))
            })
    }
}

/// One signature: failures of one suite, store kind, compared kind and first op over a range
/// of adjacent versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// 16 hex digits, a hash of suite, versions, kind, compared and first op: the same
    /// finding has the same id in every hunt.
    pub id: String,
    /// Its suite.
    pub suite: Suite,
    /// The versions it failed on as a range (`v1.3.3–v1.3.7`, `v2.4.2`), or a migration pair
    /// (`v1.3.17→v2.4.2`).
    pub versions: String,
    /// Every tag of the range (a pair's two tags, in order).
    pub version_list: Vec<String>,
    /// The store kind's id (`plain`, `aes128`, ...).
    pub kind: String,
    /// What differed first: a `Compared` kind (`get i32`, `keys`); for a fault, power-loss or
    /// disk-error state its verdict class (`discard/store: get i32`, `recover/store: reader refused`).
    pub compared: String,
    /// The op after which the minimal workload first differs (`set`, `switch`); for a fault
    /// state its damage class (`killed during an op: truncate data + flip meta`), for a
    /// power-loss state its crash class (`crc ahead`, `torn`), for a disk-error state its
    /// failure class (`finished: msync + write failed`), or that the undamaged store already
    /// differs.
    pub first_op: String,
    /// How many failures have this signature.
    pub count: u64,
    /// The first of them (track-upstream keeps the smallest over several documents).
    pub example: Example,
}

/// One saved failure of a signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Example {
    /// Its failure folder.
    pub dir: String,
    /// The command that replays it.
    pub replay: String,
    /// The seed of the property run or state batch that found it.
    pub seed: u64,
    /// The folder's `workload.yaml` (the shrunk workload); for a fault, power-loss or
    /// disk-error state, the folder's state description (`verdict.txt`, `state.txt`).
    pub workload: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suites_have_one_name_each_way() {
        for s in Suite::ALL {
            assert_eq!(s.name().parse::<Suite>(), Ok(s));
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::Value::from(s.name())
            );
        }
        assert!("faults".parse::<Suite>().unwrap_err().contains("diskerr"));
        assert_eq!("diskerr".parse::<Suite>(), Ok(Suite::Diskerr));
        let mut runs = Runs::default();
        *runs.of_mut(Suite::Powerloss) += 3;
        *runs.of_mut(Suite::Diskerr) += 5;
        assert_eq!(
            (
                runs.of(Suite::Powerloss),
                runs.of(Suite::Diskerr),
                runs.of(Suite::Fault)
            ),
            (3, 5, 0)
        );
        assert!(Suite::Fault.states() && Suite::Diskerr.states() && !Suite::Migration.states());
        let json = serde_json::to_value(runs).unwrap();
        assert_eq!(json["diskerr"], 5, "{json}");
    }
}
