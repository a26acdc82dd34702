//! Where a saved failure first differs: its minimal repro replayed prefix by prefix (each run
//! ends with the runner's final check), the first prefix that fails naming the op it ends with
//! and the `Compared` kind of its first mismatch. A prefix ends either after an op, or (in a
//! migration) at the switch to the next version, before that version's first op.

use crate::differential::runner::run_repro;
use crate::differential::workload::{Continuation, Op, Repro};
use crate::sides::official::OfficialLib;
use crate::sides::view::ReaderFactory;

/// The first difference of a repro.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstDifference {
    /// The `Compared` text of the first mismatch of the first failing prefix.
    pub compared: String,
    /// The op that prefix ends with ([`op_name`]; `open` for none, `switch` at a version
    /// switch, `… after switch` for ops of the version that continues).
    pub first_op: String,
}

/// Compared when every prefix passed on replay (a failure that did not come back).
pub const NOT_AGAIN: &str = "none (passed on replay)";

/// An op's name: its `op:` in the YAML (`set`, `remove_keys`, `rekey` ...).
pub fn op_name(op: &Op) -> String {
    serde_json::to_value(op)
        .ok()
        .and_then(|v| v.get("op").and_then(|o| o.as_str().map(str::to_string)))
        .unwrap_or_else(|| "?".to_string())
}

/// Every prefix of `repro`, shortest first, with the op it ends with.
fn prefixes(repro: &Repro) -> Vec<(Repro, String)> {
    let cut = |ops: &[Op], then: Vec<Continuation>| Repro {
        workload: crate::differential::workload::Workload {
            ops: ops.to_vec(),
            ..repro.workload.clone()
        },
        then,
        ..repro.clone()
    };
    let ops = &repro.workload.ops;
    let mut out = vec![(cut(&[], Vec::new()), "open".to_string())];
    for k in 1..=ops.len() {
        out.push((cut(&ops[..k], Vec::new()), op_name(&ops[k - 1])));
    }
    for (n, c) in repro.then.iter().enumerate() {
        let switch = if repro.then.len() > 1 {
            format!("switch {}", n + 1)
        } else {
            "switch".to_string()
        };
        for k in 0..=c.ops.len() {
            let mut then = repro.then[..n].to_vec();
            then.push(Continuation {
                tag: c.tag.clone(),
                ops: c.ops[..k].to_vec(),
            });
            let name = match k {
                0 => switch.clone(),
                _ => format!("{} after {switch}", op_name(&c.ops[k - 1])),
            };
            out.push((cut(ops, then), name));
        }
    }
    out
}

/// Replays the prefixes of `repro` (with `libs` as [`run_repro`] takes them) until one fails.
pub fn first_difference(
    libs: &[&dyn OfficialLib],
    repro: &Repro,
    reader: &dyn ReaderFactory,
) -> FirstDifference {
    for (prefix, first_op) in prefixes(repro) {
        let compared = match run_repro(libs, &prefix, reader) {
            Ok(outcome) => match outcome.mismatches.first() {
                Some((_, m)) => m.what.to_string(),
                None => continue,
            },
            Err(e) => format!("harness error: {}", first_line(&e.to_string())),
        };
        return FirstDifference { compared, first_op };
    }
    FirstDifference {
        compared: NOT_AGAIN.to_string(),
        first_op: "none".to_string(),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::differential::workload::{Key, Value, Workload};
    use crate::vocab::kind::StoreKind;

    fn set(k: &str) -> Op {
        Op::Set {
            key: Key::from(k),
            value: Value::I32(-1),
            expire: None,
        }
    }

    #[test]
    fn prefixes_end_at_each_op_and_at_the_switch() {
        let repro = Repro {
            tag: "v1.2.16".to_string(),
            kind: StoreKind::Plain,
            workload: Workload::new(vec![set("a"), Op::Trim]),
            then: vec![Continuation {
                tag: "v2.4.2".to_string(),
                ops: vec![Op::Remove {
                    key: Key::from("a"),
                }],
            }],
            clock: Some(7),
        };
        let p = prefixes(&repro);
        let names: Vec<&str> = p.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(
            names,
            ["open", "set", "trim", "switch", "remove after switch"]
        );
        assert_eq!(p[1].0.workload.ops, [set("a")]);
        assert!(p[2].0.then.is_empty());
        assert_eq!(p[3].0.then[0].ops, []);
        assert_eq!(p[4].0, repro, "the last prefix is the whole repro");
        assert!(p.iter().all(|(r, _)| r.clock == Some(7)));
    }
}
