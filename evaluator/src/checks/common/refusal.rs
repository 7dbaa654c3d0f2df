//! The one reading of an answer to a request a server must refuse, shared by every rule
//! that judges such a refusal (`revisions-pinned`, `resource-templates-typed`,
//! `prompt-arguments-validated`, `null-id-rejected`).
//!
//! [`classify`] sorts an answer into one [`Class`]: refused with a code the rule
//! requires, refused with another JSON-RPC error code (or none), refused at the HTTP
//! level without a JSON-RPC answer, accepted, or not attributable to the server's
//! judgement of the request. [`Class::judged`] is the one table of outcomes; the only
//! row a rule chooses is what a refusal with another code is, its [`Strictness`]: FAIL,
//! or PASS with the deviation named. The strictness is a parameter of the rule
//! ([`param`], a [`ParamKind::Choice`] a definition may leave out), declared with the
//! default that is the rule's behaviour in CIS MCP Server Benchmark v1.0.0, so a
//! definition that leaves it out grades and reports as before. A rule writes its own
//! sentences; where it departs from the table for a case its recommendation singles out
//! (a code with a fixed meaning, a required status), it says so where it grades.

use crate::check::{Context, ParamKind, ParamSpec, ParamValue};
use crate::checks::common::wire::{Answer, Reply};
use crate::verdict::SubOutcome;

/// How an answer to a request that must be refused reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Refused with a JSON-RPC error whose code is one the rule requires.
    Required(i64),
    /// Refused with a JSON-RPC error whose code is another (`None`: the error object
    /// carries no integer code).
    OtherCode(Option<i64>),
    /// Refused at the HTTP level: a status outside 2xx (and not 401/403) whose body
    /// holds no JSON-RPC answer; a gateway or proxy produces exactly that.
    HttpOnly(u16),
    /// Accepted: a JSON-RPC result, a 2xx with an empty body (a request acknowledged
    /// like a notification), or a 2xx event stream closed without an answer.
    Accepted,
    /// Not attributable to the server's judgement of the request.
    NotAttributable(Unattributed),
}

/// Why an answer is not attributable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unattributed {
    /// No response arrived.
    NoResponse,
    /// HTTP 401 or 403: refused at authentication, before the question was reached.
    Authentication,
    /// A 2xx whose body holds no JSON-RPC answer (foreign, broken off or not read).
    Unread,
}

/// What a refusal with a code other than the required one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// FAIL: the recommendation requires the code.
    Fail,
    /// PASS, with the deviation named: a refusal is still a refusal.
    Pass,
}

/// The words of [`Strictness`], as a definition writes them.
const WORDS: &[&str] = &["fail", "pass"];

/// The strictness parameter of a rule that judges a refusal, with the rule's default.
pub const fn param(default: Strictness) -> ParamSpec {
    ParamSpec {
        name: "refusal_with_other_code",
        kind: ParamKind::Choice(WORDS),
        default: ParamValue::Text(match default {
            Strictness::Fail => "fail",
            Strictness::Pass => "pass",
        }),
        doc: "what a refusal with a JSON-RPC code other than the required one is: \"fail\", or \
              \"pass\" with the deviation named",
    }
}

impl Strictness {
    /// The strictness `spec` (made by [`param`]) has in `cx`.
    pub fn of(cx: &Context<'_>, spec: &ParamSpec) -> Strictness {
        match cx.text(spec) {
            "pass" => Strictness::Pass,
            _ => Strictness::Fail,
        }
    }

    /// The outcome of a refusal with another code.
    pub fn other_code(self) -> SubOutcome {
        match self {
            Strictness::Fail => SubOutcome::Fail,
            Strictness::Pass => SubOutcome::Pass,
        }
    }
}

impl Class {
    /// A JSON-RPC error object's `code` (`None`: not an integer) against `required`.
    pub fn of_code(code: Option<i64>, required: &[i64]) -> Class {
        match code {
            Some(c) if required.contains(&c) => Class::Required(c),
            other => Class::OtherCode(other),
        }
    }

    /// The one table: a required code passes, another code is what `strictness` says,
    /// an HTTP-level refusal without a code is not attributed (ERROR), an acceptance
    /// fails, a refusal at authentication never reached the question (UNKNOWN), and no
    /// response or an unread 2xx is ERROR.
    pub fn judged(self, strictness: Strictness) -> SubOutcome {
        match self {
            Class::Required(_) => SubOutcome::Pass,
            Class::OtherCode(_) => strictness.other_code(),
            Class::HttpOnly(_) => SubOutcome::Error,
            Class::Accepted => SubOutcome::Fail,
            Class::NotAttributable(Unattributed::Authentication) => SubOutcome::Unknown,
            Class::NotAttributable(Unattributed::NoResponse | Unattributed::Unread) => {
                SubOutcome::Error
            }
        }
    }
}

/// The class of a recorded answer (read with [`crate::checks::common::wire::read`]),
/// `required` the codes the rule requires.
pub fn classify(a: &Answer, required: &[i64]) -> Class {
    if matches!(a.status, Some(401 | 403)) {
        return Class::NotAttributable(Unattributed::Authentication);
    }
    match &a.reply {
        Reply::NoResponse(_) => Class::NotAttributable(Unattributed::NoResponse),
        Reply::Error(e) => Class::of_code(e.code, required),
        Reply::Result(_) | Reply::Empty | Reply::StreamWithoutAnswer => Class::Accepted,
        Reply::Bare(_) => match a.status {
            Some(s) if !(200..300).contains(&s) => Class::HttpOnly(s),
            _ => Class::NotAttributable(Unattributed::Unread),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Params;
    use crate::checks::common::wire::{RpcError, StatusLabel};

    fn answer(status: Option<u16>, reply: Reply) -> Answer {
        Answer {
            status,
            status_label: StatusLabel::Given("".into()),
            reply,
            seq: 1,
        }
    }

    fn error(code: Option<i64>) -> Reply<'static> {
        Reply::Error(RpcError {
            code,
            message: "m".into(),
            data: None,
            foreign_id: None,
        })
    }

    /// Every row of the table: the answer, its class, and the outcome under each
    /// strictness.
    #[test]
    fn the_table() {
        use SubOutcome::{Error, Fail, Pass, Unknown};
        let required = [-32602, -32002];
        let rows = [
            (
                Some(400),
                error(Some(-32602)),
                Class::Required(-32602),
                Pass,
                Pass,
            ),
            (
                Some(200),
                error(Some(-32002)),
                Class::Required(-32002),
                Pass,
                Pass,
            ),
            (
                Some(404),
                error(Some(-32000)),
                Class::OtherCode(Some(-32000)),
                Fail,
                Pass,
            ),
            (
                Some(200),
                error(Some(-32603)),
                Class::OtherCode(Some(-32603)),
                Fail,
                Pass,
            ),
            (Some(400), error(None), Class::OtherCode(None), Fail, Pass),
            (
                Some(404),
                Reply::Bare("html".into()),
                Class::HttpOnly(404),
                Error,
                Error,
            ),
            (
                Some(200),
                Reply::Result(serde_json::json!({}).into()),
                Class::Accepted,
                Fail,
                Fail,
            ),
            (
                Some(500),
                Reply::Result(serde_json::json!({}).into()),
                Class::Accepted,
                Fail,
                Fail,
            ),
            (Some(202), Reply::Empty, Class::Accepted, Fail, Fail),
            (
                Some(200),
                Reply::StreamWithoutAnswer,
                Class::Accepted,
                Fail,
                Fail,
            ),
            (
                Some(401),
                error(Some(-32602)),
                Class::NotAttributable(Unattributed::Authentication),
                Unknown,
                Unknown,
            ),
            (
                Some(403),
                Reply::Bare("forbidden".into()),
                Class::NotAttributable(Unattributed::Authentication),
                Unknown,
                Unknown,
            ),
            (
                None,
                Reply::NoResponse("reset".into()),
                Class::NotAttributable(Unattributed::NoResponse),
                Error,
                Error,
            ),
            (
                Some(200),
                Reply::Bare("html".into()),
                Class::NotAttributable(Unattributed::Unread),
                Error,
                Error,
            ),
        ];
        for (status, reply, class, strict, lenient) in rows {
            let got = classify(&answer(status, reply.clone()), &required);
            assert_eq!(got, class, "{status:?} {reply:?}");
            assert_eq!(got.judged(Strictness::Fail), strict, "{class:?} fail");
            assert_eq!(got.judged(Strictness::Pass), lenient, "{class:?} pass");
        }
    }

    #[test]
    fn the_strictness_is_the_rules_parameter_with_its_default() {
        const STRICT: ParamSpec = param(Strictness::Fail);
        const LENIENT: ParamSpec = param(Strictness::Pass);
        let none = Context::default();
        assert_eq!(Strictness::of(&none, &STRICT), Strictness::Fail);
        assert_eq!(Strictness::of(&none, &LENIENT), Strictness::Pass);
        let given = Params([(STRICT.name, ParamValue::Text("pass"))].into());
        let cx = Context {
            params: &given,
            ..Default::default()
        };
        assert_eq!(Strictness::of(&cx, &STRICT), Strictness::Pass);
        assert_eq!(STRICT.kind, ParamKind::Choice(&["fail", "pass"]));
    }
}
