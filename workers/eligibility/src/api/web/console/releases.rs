//! Releases (docs/web.md, "The rules console"): what went live when — every stored rule version,
//! newest first, with the approved proposal it came from — and, for one release, the
//! re-evaluation it caused, read from the audit log: the citizens evaluated under the new
//! version and, for each, the verdict before (their scheme's latest audit row under another
//! version) and after (their first under this one). Counts only, small cells withheld.

use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use maud::html;

use super::Console;
use super::charts::{Bar, Tone, bar_chart};
use crate::api::problem::Problem;
use crate::api::web::layout::with_lang;
use crate::api::web::verdict_name_word;
use crate::rules::simulate::cell;

/// Releases listed (the newest).
pub const LISTED: i64 = 100;
/// The longest the audit log is read for one release's re-evaluation.
const COUNT_TIMEOUT: &str = "10s";

/// One stored version and its review.
struct Release {
    rule_id: String,
    scheme_id: String,
    version: i32,
    stored_at: String,
    stored_by: String,
    change_reason: Option<String>,
    effective_from: String,
    /// The approved proposal with its exact document: id, decided by, decided at.
    approved: Option<(i64, String, String)>,
}

const COLUMNS: &str = "r.rule_id, r.scheme_id, r.rule_version,
     to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), r.created_by,
     r.change_reason, r.effective_from::text,
     p.proposal_id, p.decided_by, to_char(p.decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
     FROM eligibility_rules r
     LEFT JOIN rule_proposals p ON p.rule_hash = r.rule_hash AND p.status = 'approved'";

fn from_row(row: &tokio_postgres::Row) -> Release {
    let proposal: Option<i64> = row.get(7);
    Release {
        rule_id: row.get(0),
        scheme_id: row.get(1),
        version: row.get(2),
        stored_at: row.get(3),
        stored_by: row.get(4),
        change_reason: row.get(5),
        effective_from: row.get(6),
        approved: proposal.map(|id| {
            (
                id,
                row.get::<_, Option<String>>(8).unwrap_or_default(),
                row.get::<_, Option<String>>(9).unwrap_or_default(),
            )
        }),
    }
}

/// `GET /console/releases`.
pub async fn list(console: Console) -> Response {
    let lang = console.lang;
    let w = |key| lang.page(key);
    let catalogue = &console.service.book().catalogue;
    let rows = async {
        let client = console.service.pool.get().await?;
        let query = format!("SELECT {COLUMNS} ORDER BY r.created_at DESC, r.rule_id LIMIT $1");
        anyhow::Ok(client.query(&query, &[&LISTED]).await?)
    }
    .await;
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => return Problem::from(e).into_response(),
    };
    let releases: Vec<Release> = rows.iter().map(from_row).collect();
    let body = html! {
        p { (w("console_releases_intro")) }
        table {
            thead { tr {
                th scope="col" { (w("console_stored_at")) }
                th scope="col" { (w("desk_scheme")) }
                th scope="col" { (w("desk_rule_version")) }
                th scope="col" { (w("console_in_effect_from")) }
                th scope="col" { (w("console_approved_by")) }
            } }
            tbody {
                @for r in &releases {
                    tr {
                        td { a href=(with_lang(&format!("/console/releases/{}", r.rule_id), lang)) { (r.stored_at) " UTC" } }
                        td { (explain::scheme_name_in(catalogue, lang, &r.scheme_id, &r.scheme_id)) }
                        td { (r.version) }
                        td { (r.effective_from) }
                        td { @if let Some((id, by, _)) = &r.approved {
                            a href=(with_lang(&format!("/console/proposals/{id}"), lang)) { (by) " (#" (id) ")" }
                        } @else { (r.stored_by) } }
                    }
                }
            }
        }
    };
    console.page(w("console_releases"), "/console/releases", body)
}

/// One cell of the re-evaluation: the verdict before (None: no earlier evaluation of the
/// scheme), after, and the citizens.
type Moved = (Option<String>, String, i64);

/// `GET /console/releases/{rule_id}`: one release and the re-evaluation it caused.
pub async fn release(console: Console, Path(rule_id): Path<String>) -> Response {
    let rule_id = rule_id.as_str();
    let lang = console.lang;
    let w = |key| lang.page(key);
    let here = format!("/console/releases/{rule_id}");
    let catalogue = &console.service.book().catalogue;
    let read = async {
        let mut client = console.service.pool.get().await?;
        let query = format!("SELECT {COLUMNS} WHERE r.rule_id = $1");
        let Some(row) = client.query_opt(&query, &[&rule_id]).await? else {
            return anyhow::Ok(None);
        };
        let release = from_row(&row);
        // Bounded: a scheme's audit rows read for at most COUNT_TIMEOUT.
        let tx = client.transaction().await?;
        tx.batch_execute(&format!("SET LOCAL statement_timeout = '{COUNT_TIMEOUT}'"))
            .await?;
        let moved = tx
            .query(
                "WITH firsts AS (
                     SELECT DISTINCT ON (user_id) user_id, verdict, created_at
                     FROM evaluation_audit_log WHERE scheme_id = $2 AND rule_id = $1
                     ORDER BY user_id, created_at, evaluation_id)
                 SELECT p.verdict, f.verdict, count(*)::bigint
                 FROM firsts f LEFT JOIN LATERAL (
                     SELECT a.verdict FROM evaluation_audit_log a
                     WHERE a.user_id = f.user_id AND a.scheme_id = $2 AND a.rule_id <> $1
                       AND a.created_at <= f.created_at
                     ORDER BY a.created_at DESC LIMIT 1) p ON true
                 GROUP BY 1, 2 ORDER BY 3 DESC",
                &[&rule_id, &release.scheme_id],
            )
            .await
            .map(|rows| {
                rows.iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2)))
                    .collect::<Vec<Moved>>()
            });
        tx.commit().await.ok();
        anyhow::Ok(Some((release, moved.ok())))
    }
    .await;
    let (release, moved) = match read {
        Ok(Some(found)) => found,
        Ok(None) => return console.problem(w("console_releases"), &here, Problem::not_found()),
        Err(e) => return Problem::from(e).into_response(),
    };
    let name = explain::scheme_name_in(catalogue, lang, &release.scheme_id, &release.scheme_id);
    let title = explain::fill(
        w("console_release_title"),
        &[("scheme", &name), ("version", &release.version.to_string())],
    );
    // Counts as admins see every count (`simulate::cell`: small ones withheld).
    let shown = |n: i64| super::review::count(&cell(n.max(0) as u64));
    let verdict = |name: &str| verdict_name_word(lang, name).to_string();
    let body = html! {
        dl.facts {
            dt { (w("console_stored_at")) } dd { (release.stored_at) " UTC · " (release.stored_by) }
            dt { (w("console_in_effect_from")) } dd { (release.effective_from) }
            dt { (w("console_reason")) } dd { (release.change_reason.as_deref().unwrap_or("—")) }
            dt { (w("console_approved_by")) }
            dd { @if let Some((id, by, at)) = &release.approved {
                a href=(with_lang(&format!("/console/proposals/{id}"), lang)) { (by) " (#" (id) ")" } " · " (at) " UTC"
            } @else { "—" } }
        }
        h2 { (w("console_reevaluation")) }
        @match &moved {
            None => p.error role="alert" { (w("console_reevaluation_unread")) },
            Some(moved) if moved.is_empty() => p { (w("console_reevaluation_none")) },
            Some(moved) => {
                @let total: i64 = moved.iter().map(|m| m.2).sum();
                @let changed: i64 = moved.iter().filter(|m| m.0.as_deref() != Some(m.1.as_str())).map(|m| m.2).sum();
                p data-reevaluated=(total) {
                    (explain::fill(w("console_reevaluated"), &[("citizens", &shown(total).1), ("changed", &shown(changed).1)]))
                }
                (bar_chart("reevaluation", w("console_reevaluation"), (w("console_change"), w("console_citizens")),
                    &moved.iter().map(|(from, to, n)| {
                        let (value, shown) = shown(*n);
                        let from_words = from.as_deref().map_or_else(|| w("console_first_evaluation").to_string(), verdict);
                        Bar {
                            label: format!("{from_words} → {}", verdict(to)),
                            value,
                            shown,
                            tone: Tone::of_transition(from.as_deref(), to),
                        }
                    }).collect::<Vec<_>>()))
            }
        }
    };
    console.page(&title, &here, body)
}
