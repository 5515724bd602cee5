//! GitHub GraphQL resources: the merged-PR listing (search, in pages, with everything a candidate
//! needs except its diff) and the batched lookup of issues named by closing keywords. Query text
//! and response shapes only; retries and rate limits live in `client`.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::client::Client;
use crate::error::MineError;
use crate::links::IssueRef;

/// The listing query: one page of closed PRs of a search, with files, commit messages and the
/// issues GitHub links as closed by each PR.
pub const SEARCH_QUERY: &str = r#"query($q: String!, $first: Int!, $after: String) {
  rateLimit { cost remaining resetAt }
  search(query: $q, type: ISSUE, first: $first, after: $after) {
    issueCount
    pageInfo { hasNextPage endCursor }
    nodes {
      ... on PullRequest {
        number title body url isDraft merged createdAt mergedAt closedAt
        author { __typename login }
        baseRefName baseRefOid headRefOid
        baseRepository { nameWithOwner owner { login } }
        mergeCommit { oid }
        additions deletions changedFiles
        files(first: 100) { totalCount nodes { path additions deletions } }
        commits(first: 50) { totalCount nodes { commit { message } } }
        closingIssuesReferences(first: 25) { nodes { number title body repository { nameWithOwner } } }
      }
    }
  }
}"#;

/// A GraphQL answer.
#[derive(Debug, Deserialize)]
pub struct GraphqlResponse<T> {
    /// The data, absent on errors.
    pub data: Option<T>,
    /// Errors, if any.
    #[serde(default)]
    pub errors: Vec<GraphqlError>,
}

/// One GraphQL error.
#[derive(Debug, Deserialize)]
pub struct GraphqlError {
    /// What went wrong.
    pub message: String,
    /// `NOT_FOUND`, `RATE_LIMITED`, ...
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

/// `data` of [`SEARCH_QUERY`].
#[derive(Debug, Deserialize)]
pub struct SearchData {
    /// The search.
    pub search: Search,
}

/// One page of search results.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Search {
    /// Results of the whole search (GitHub serves at most 1,000).
    pub issue_count: u64,
    /// Cursor of this page.
    pub page_info: PageInfo,
    /// Results; issues (if the query let any through) come as empty objects.
    pub nodes: Vec<Option<PullRequestNode>>,
}

/// Relay page info.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageInfo {
    /// More pages follow.
    pub has_next_page: bool,
    /// Cursor of the last result.
    pub end_cursor: Option<String>,
}

/// A pull request as the listing returns it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct PullRequestNode {
    pub number: Option<u64>,
    #[serde(default)]
    pub title: String,
    pub body: Option<String>,
    #[serde(default)]
    pub is_draft: bool,
    #[serde(default)]
    pub merged: bool,
    #[serde(default)]
    pub created_at: Option<String>,
    pub merged_at: Option<String>,
    pub author: Option<Author>,
    #[serde(default)]
    pub base_ref_name: String,
    #[serde(default)]
    pub base_ref_oid: String,
    #[serde(default)]
    pub head_ref_oid: String,
    pub base_repository: Option<BaseRepository>,
    pub merge_commit: Option<Oid>,
    #[serde(default)]
    pub changed_files: u64,
    pub files: Option<Connection<ChangedFile>>,
    pub commits: Option<Connection<CommitNode>>,
    pub closing_issues_references: Option<Connection<IssueNode>>,
}

/// A connection with a count and nodes.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", bound(deserialize = "T: Deserialize<'de>"))]
#[allow(missing_docs)]
pub struct Connection<T> {
    #[serde(default)]
    pub total_count: Option<u64>,
    #[serde(default)]
    pub nodes: Vec<Option<T>>,
}

impl<T> Connection<T> {
    /// The nodes that are not null.
    pub fn items(&self) -> impl Iterator<Item = &T> {
        self.nodes.iter().flatten()
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct Author {
    #[serde(rename = "__typename", default)]
    pub typename: String,
    #[serde(default)]
    pub login: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct BaseRepository {
    pub owner: Login,
}

#[derive(Debug, Clone, Deserialize)]
#[allow(missing_docs)]
pub struct Login {
    pub login: String,
}

#[derive(Debug, Clone, Deserialize)]
#[allow(missing_docs)]
pub struct Oid {
    pub oid: String,
}

#[derive(Debug, Clone, Deserialize)]
#[allow(missing_docs)]
pub struct ChangedFile {
    pub path: String,
    #[serde(default)]
    pub additions: u64,
    #[serde(default)]
    pub deletions: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[allow(missing_docs)]
pub struct CommitNode {
    pub commit: CommitMessage,
}

#[derive(Debug, Clone, Deserialize)]
#[allow(missing_docs)]
pub struct CommitMessage {
    #[serde(default)]
    pub message: String,
}

/// An issue with its text.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct IssueNode {
    pub number: u64,
    #[serde(default)]
    pub title: String,
    pub body: Option<String>,
    pub repository: Option<NameWithOwner>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct NameWithOwner {
    pub name_with_owner: String,
}

impl PullRequestNode {
    /// Opened by a bot: a `Bot` author or a login ending in `[bot]`.
    pub fn is_bot(&self) -> bool {
        self.author.as_ref().is_some_and(|a| a.typename == "Bot" || a.login.ends_with("[bot]"))
    }
}

/// One page of the listing.
pub async fn search_page(client: &Client, query: &str, first: u32, after: Option<&str>) -> Result<Search, MineError> {
    let vars = serde_json::json!({ "q": query, "first": first, "after": after });
    let resp: GraphqlResponse<SearchData> = client.graphql(SEARCH_QUERY, vars, parse_graphql).await?;
    match resp.data {
        Some(d) => Ok(d.search),
        None => Err(graphql_error("search", &resp.errors)),
    }
}

/// Parses a GraphQL answer. A `RATE_LIMITED` error (GitHub sends it with status 200) is refused
/// like a malformed body, so the client retries after its backoff, by which time the spent token
/// is parked (its `X-RateLimit-Remaining: 0` was seen) and another one, or the reset, takes over.
fn parse_graphql<T: serde::de::DeserializeOwned>(body: &str) -> Result<GraphqlResponse<T>, AnswerError> {
    let r: GraphqlResponse<T> = serde_json::from_str(body)?;
    if r.errors.iter().any(|e| e.kind.as_deref() == Some("RATE_LIMITED")) {
        return Err(AnswerError::RateLimited);
    }
    Ok(r)
}

/// Why a GraphQL answer is refused (the client tries again).
#[derive(Debug, thiserror::Error)]
enum AnswerError {
    /// Not the JSON of an answer.
    #[error("{0}")]
    Malformed(#[from] serde_json::Error),
    /// GitHub's `RATE_LIMITED` error.
    #[error("GraphQL rate limit")]
    RateLimited,
}

fn graphql_error(what: &str, errors: &[GraphqlError]) -> MineError {
    let message = errors
        .iter()
        .map(|e| match &e.kind {
            Some(k) => format!("{k}: {}", e.message),
            None => e.message.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ");
    MineError::Api { method: "POST", path: format!("/graphql ({what})"), status: None, message }
}

/// Titles and bodies of `refs`, in one query (aliases per repository and issue). References that
/// are pull requests or do not exist are absent from the result.
pub async fn lookup_issues(
    client: &Client,
    refs: &[IssueRef],
) -> Result<BTreeMap<IssueRef, (String, Option<String>)>, MineError> {
    let mut by_repo: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for r in refs {
        by_repo.entry(r.repo.as_str()).or_default().push(r.number);
    }
    let mut query = String::from("query {\n");
    let mut aliases: Vec<(String, String, u64)> = Vec::new();
    for (k, (repo, numbers)) in by_repo.iter().enumerate() {
        let Some((owner, name)) = repo.split_once('/') else { continue };
        let owner = serde_json::to_string(owner).expect("strings serialize");
        let name = serde_json::to_string(name).expect("strings serialize");
        query.push_str(&format!("  r{k}: repository(owner: {owner}, name: {name}) {{\n"));
        for n in numbers {
            query.push_str(&format!(
                "    i{n}: issueOrPullRequest(number: {n}) {{ __typename ... on Issue {{ number title body }} }}\n"
            ));
            aliases.push((format!("r{k}"), format!("i{n}"), *n));
        }
        query.push_str("  }\n");
    }
    query.push('}');
    // Missing issues come back as `null` with NOT_FOUND errors next to the data; that is an answer.
    let resp: GraphqlResponse<serde_json::Value> = client.graphql(&query, serde_json::json!({}), parse_graphql).await?;
    let Some(data) = resp.data else { return Err(graphql_error("issues", &resp.errors)) };
    let mut out = BTreeMap::new();
    let repos: Vec<&&str> = by_repo.keys().collect();
    for (ralias, ialias, n) in aliases {
        let k: usize = ralias[1..].parse().expect("our alias");
        let node = &data[&ralias][&ialias];
        if node["__typename"] == "Issue" {
            let title = node["title"].as_str().unwrap_or_default().to_owned();
            let body = node["body"].as_str().map(str::to_owned);
            out.insert(IssueRef { repo: (*repos[k]).to_owned(), number: n }, (title, body));
        }
    }
    Ok(out)
}
