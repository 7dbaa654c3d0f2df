//! Every era a server serves. A 2026-07-28 server that still answers `initialize` is
//! two attack surfaces: any client can pick the older era, and the code that answers it
//! is not the code that answered the negotiated requests. After the negotiated
//! session's legs, the collector opens a session of the other era on the same endpoint
//! (an `initialize` offering 2025-11-25, then the newest handshake revision a refusal
//! names, recorded under `era.initialize`), records it in `session.other_eras`, and
//! sends the families whose legs are in [`family::PER_ERA`] once more, each request
//! complete for that era. Their records carry the leg ids qualified with
//! `@<revision>` (the journal appends it), so the grader grades those checks on each
//! era and names the era in every leg. The Section 5 live legs (5.1.1d, 5.1.2c,
//! 5.1.3c/d, 5.4.1a) are among them: they pick from the inventory the negotiated
//! session recorded (the lists are not fetched again) and pass the same gates (the
//! operator's inputs, the controls, 5.4.1's consent) on each era.
//!
//! A server that negotiated a handshake revision refused 2026-07-28 at detection: it
//! has no other era to probe, and nothing more is sent.

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{Era, EraSession};
use mcp_probe_schema::vocab::{self, family, header, leg, method};
use serde_json::Value;

use super::AFTER_INVENTORY;
use crate::journal::lock;
use crate::mcp::Probe;

/// What the probe keeps of the negotiated session while it works on another.
struct Negotiated {
    era: Option<Era>,
    revision: Option<String>,
    session_id: Option<String>,
}

impl Probe<'_> {
    /// Open a session of the legacy era on a 2026-07-28 server and send the per-era
    /// families on it. `info_only` sends nothing.
    pub async fn other_eras(&mut self, info_only: bool) {
        if info_only || self.era != Some(Era::Modern) {
            return;
        }
        let Some(endpoint) = self.endpoint.clone() else {
            return;
        };
        let mut offer = vocab::REV_2025_11_25.to_string();
        let mut tried: Vec<String> = Vec::new();
        let (revision, result, seq, session_id) = loop {
            tried.push(offer.clone());
            let (h, body, id) = self.initialize_body(&offer);
            let r = self
                .rpc(&[leg::ERA_INITIALIZE], &endpoint, h, &body, Some(id))
                .await;
            if let (Some(200), Some(result)) = (r.status, r.result().cloned()) {
                let echoed = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if !vocab::HANDSHAKE_REVISIONS.contains(&echoed.as_str()) {
                    // A revision this tool cannot speak: nothing it sends would be
                    // complete for it. The record shows the answer.
                    return;
                }
                let sid = derive::header(&r.headers, header::SESSION_ID)
                    .map(|h| h.value_str().into_owned());
                break (echoed, result, r.seq, sid);
            }
            // A refusal naming the revisions it serves gets one more offer, of the
            // newest this tool speaks; any other refusal says 2026-07-28 only.
            match crate::mcp::negotiation::supported_handshake(&r)
                .into_iter()
                .find(|rev| !tried.contains(rev))
            {
                Some(next) if tried.len() < vocab::HANDSHAKE_REVISIONS.len() => offer = next,
                _ => return,
            }
        };
        let saved = Negotiated {
            era: self.era.take(),
            revision: self.revision.take(),
            session_id: self.session_id.take(),
        };
        self.era = Some(Era::Legacy);
        self.revision = Some(revision.clone());
        self.session_id = session_id.clone();
        let (h, body, _) = self.legacy(method::INITIALIZED, serde_json::Map::new(), true);
        let _ = self
            .rpc(&[leg::ERA_INITIALIZE], &endpoint, h, &body, None)
            .await;
        {
            let mut j = lock(&self.journal);
            j.update_session(|s| {
                s.other_eras.push(EraSession {
                    era: Era::Legacy,
                    revision: revision.clone(),
                    server_info: result.get("serverInfo").cloned(),
                    capabilities: result.get("capabilities").cloned(),
                    session_id,
                    negotiated_in: seq,
                })
            });
            j.qualify_legs(Some(&revision));
        }
        for f in AFTER_INVENTORY
            .iter()
            .filter(|f| f.legs().iter().any(|l| family::PER_ERA.contains(l)))
        {
            f.send(self).await;
        }
        lock(&self.journal).qualify_legs(None);
        self.era = saved.era;
        self.revision = saved.revision;
        self.session_id = saved.session_id;
    }

    /// True while the legs of another era's session are being sent (what a leg must
    /// not write into the negotiated session's facts).
    pub(crate) fn on_other_era(&self) -> bool {
        lock(&self.journal).qualifying()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_per_era_families_are_those_of_2_3_2_5_7_1_2_and_the_live_legs() {
        let checks: Vec<&str> = AFTER_INVENTORY
            .iter()
            .filter(|f| f.legs().iter().any(|l| family::PER_ERA.contains(l)))
            .map(|f| f.check())
            .collect();
        assert_eq!(
            checks,
            ["2.3", "2.5", "7.1.2", "5.1.1", "5.1.2", "5.1.3", "5.4.1"]
        );
        // Every leg of those families is per era: a family is never half qualified.
        for f in AFTER_INVENTORY
            .iter()
            .filter(|f| f.legs().iter().any(|l| family::PER_ERA.contains(l)))
        {
            assert!(f.legs().iter().all(|l| family::PER_ERA.contains(l)));
        }
    }
}
