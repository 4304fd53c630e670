//! The tools of the later analyses, a router of their own added to the
//! server's: who holds the duplicate copies (`duplicate_owners`), what a
//! cut would free (`what_if`), why a set of objects is alive
//! (`merged_paths`). The heap walks of the last two stop when their call
//! is cancelled, and count among the answers computed at once.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ErrorData};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use serde::Deserialize;

use crate::answers::cut::{what_if_answer, CutSpec};
use crate::answers::paths::{paths, Targets};
use crate::answers::{owners, quoted};
use crate::page::Refusal;
use crate::server::{PageArgs, Server};

/// Arguments of `duplicate_owners`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct OwnersArgs {
    /// Globs over type names: the owner is the nearest dominator whose type none matches. Absent: the format's defaults (Java: java.*, javax.*, jdk.*, sun.*; .NET: System.*, Microsoft.*), as the answer's exclude says; [] cuts at none.
    pub exclude: Option<Vec<String>>,
    /// Page of the owners.
    #[serde(flatten)]
    pub page: PageArgs,
}

/// Arguments of `what_if`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct WhatIfArgs {
    /// Object ids (hex, as the answers give them) taken out of the heap; at most 1000.
    pub objects: Option<Vec<String>>,
    /// References dropped: Type.field drops the field of every instance of the type (exact name; a static field is Class.FIELD); only dumps with field names (HPROF, V8); at most 20.
    pub fields: Option<Vec<String>>,
    /// Page of the freed types.
    #[serde(flatten)]
    pub page: PageArgs,
}

/// Arguments of `merged_paths`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct PathsArgs {
    /// The objects of the types this glob matches (exact names, * any run, ? one character: `*Listener`, `java.util.HashMap`); or give objects.
    pub type_pattern: Option<String>,
    /// Or these objects (hex ids, at most 1000).
    pub objects: Option<Vec<String>>,
    /// Leave the objects of the types this glob matches out of the paths (e.g. `java.*`).
    pub skip: Option<String>,
    /// Page of the nodes, depth first.
    #[serde(flatten)]
    pub page: PageArgs,
}

#[tool_router(router = analyses_router, vis = "pub(crate)")]
impl Server {
    #[tool(
        description = "Who holds the duplicate copies: the wasted bytes of every duplicate set's extra copies charged to the type path that holds them (the nearest dominator not of a runtime type), by bytes; each owner with its sets (numbers duplicate_set takes) and its top instance's id."
    )]
    async fn duplicate_owners(
        &self,
        Parameters(a): Parameters<OwnersArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer_walk(ctx, move |l, _, _| {
            owners::owners(l, a.exclude.as_deref(), a.page.offset, a.page.limit)
        })
        .await
    }

    #[tool(
        description = "What a cut would free, exactly: take objects (ids) and/or a field of every instance of a type (Type.field) out of the heap; the objects and bytes no GC root would reach any more, and the freed objects by type with an example id each."
    )]
    async fn what_if(
        &self,
        Parameters(a): Parameters<WhatIfArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer_walk(ctx, move |l, _, progress| {
            let spec = CutSpec {
                objects: a.objects.as_deref().unwrap_or_default(),
                fields: a.fields.as_deref().unwrap_or_default(),
            };
            what_if_answer(l, &spec, progress, a.page.offset, a.page.limit)
        })
        .await
    }

    #[tool(
        description = "Why objects are alive: the shortest paths from the GC roots to the objects of the types a pattern matches (or to given ids), merged by type path into one tree, depth first, each node with how many objects pass through it, their retained bytes and an object on it."
    )]
    async fn merged_paths(
        &self,
        Parameters(a): Parameters<PathsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer_walk(ctx, move |l, _, progress| {
            let targets = match (&a.type_pattern, &a.objects) {
                (Some(p), None) => Targets::Pattern(p),
                (None, Some(ids)) => Targets::Objects(ids),
                (Some(p), Some(_)) => {
                    return Err(Refusal::new(format!(
                        "give type_pattern ({}) or objects, not both",
                        quoted(p)
                    )))
                }
                (None, None) => {
                    return Err(Refusal::new(
                        "give type_pattern (a glob over type names) or objects (ids)",
                    ))
                }
            };
            let skip = a.skip.as_deref();
            paths(l, targets, skip, progress, a.page.offset, a.page.limit)
        })
        .await
    }
}
