//! The benchmark sections no check of this tool covers, because nothing a client can
//! observe on the wire decides them: every report format ends with them, so a reader sees
//! the whole benchmark and not only its 36 probed recommendations.

/// One section out of reach: its number, what it governs, and why no wire observation
/// decides it.
#[derive(Debug, Clone, Copy)]
pub struct Unreachable {
    /// The benchmark section.
    pub section: &'static str,
    /// Its subject.
    pub title: &'static str,
    /// What its recommendations govern.
    pub governs: &'static str,
    /// Why a black-box probe cannot decide them.
    pub why: &'static str,
}

/// Sections 4, 6, 8 and 9.
pub const SECTIONS: [Unreachable; 4] = [
    Unreachable {
        section: "4",
        title: "host and client controls",
        governs: "per-tool consent and allowlists, project-scoped server definitions, elicitation and sampling consent, human denial of tool calls, filesystem scope, the stdio subprocess environment, dereferencing of untrusted resource URIs, MCP Apps sandboxing, permissions and logging",
        why: "they are enforced by the host application, the client configuration, the OS or a policy engine, and recorded in their audit logs; a server's answers on the wire do not show them",
    },
    Unreachable {
        section: "6",
        title: "data protection",
        governs: "secrets in deployments, resolver and proxy configuration, handling of data bound for models",
        why: "they live in deployment files, network configuration and data flows behind the server, which a client connection never sees",
    },
    Unreachable {
        section: "8",
        title: "supply chain",
        governs: "allowlists of servers and packages, vetting records, artefact hashes, package sources",
        why: "they are records and pipeline settings of the operator; the running server does not expose where it came from",
    },
    Unreachable {
        section: "9",
        title: "isolation",
        governs: "sandboxes, least-privilege service identities, gateways in front of servers",
        why: "they are properties of the host and network around the server; from outside, only the outermost hop answers",
    },
];
